package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
)

// attachments returns the files of a message as kairos attachments (at
// most one: Telegram sends one file per message; of a photo's sizes the
// largest is taken, the media step scales it down).
func (b *Bot) attachments(m *models.Message) []*kairos.Attachment {
	var a *kairos.Attachment
	var fileID string
	switch {
	case m.Voice != nil:
		fileID = m.Voice.FileID
		a = &kairos.Attachment{Kind: kairos.AttachVoice, Name: "voice.ogg", MIME: orDefault(m.Voice.MimeType, "audio/ogg"),
			Size: m.Voice.FileSize, Duration: time.Duration(m.Voice.Duration) * time.Second}
	case m.Audio != nil:
		fileID = m.Audio.FileID
		a = &kairos.Attachment{Kind: kairos.AttachAudio, Name: orDefault(m.Audio.FileName, "audio.mp3"), MIME: m.Audio.MimeType,
			Size: m.Audio.FileSize, Duration: time.Duration(m.Audio.Duration) * time.Second}
	case m.VideoNote != nil:
		fileID = m.VideoNote.FileID
		a = &kairos.Attachment{Kind: kairos.AttachVideoNote, Name: "video_note.mp4", MIME: "video/mp4",
			Size: int64(m.VideoNote.FileSize), Duration: time.Duration(m.VideoNote.Duration) * time.Second}
	case len(m.Photo) > 0:
		best := m.Photo[0]
		for _, p := range m.Photo[1:] {
			if p.Width*p.Height > best.Width*best.Height {
				best = p
			}
		}
		fileID = best.FileID
		a = &kairos.Attachment{Kind: kairos.AttachPhoto, Name: "photo.jpg", MIME: "image/jpeg", Size: int64(best.FileSize)}
	case m.Document != nil:
		fileID = m.Document.FileID
		a = &kairos.Attachment{Kind: kairos.AttachDocument, Name: m.Document.FileName, MIME: m.Document.MimeType, Size: m.Document.FileSize}
	default:
		return nil
	}
	a.Open = func(ctx context.Context) (io.ReadCloser, error) { return b.download(ctx, fileID) }
	return []*kairos.Attachment{a}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// download fetches a file through getFile and the file URL
// (<api>/file/bot<token>/<file_path>). The body is streamed, never held;
// reading past kairos.MaxDownloadBytes fails. Errors never carry the URL:
// it holds the token.
func (b *Bot) download(ctx context.Context, fileID string) (io.ReadCloser, error) {
	var f models.File
	if err := b.api.call(ctx, "getFile", map[string]any{"file_id": fileID}, &f); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Code == 400 && strings.Contains(strings.ToLower(ae.Description), "too big") {
			return nil, kairos.Errorf(kairos.EINVALID, "That file is too big: Telegram lets me download files up to %d MB.", kairos.MaxDownloadBytes>>20)
		}
		return nil, fmt.Errorf("get file: %w", err)
	}
	if f.FilePath == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "Telegram did not give me that file (it may be too big: the limit is %d MB).", kairos.MaxDownloadBytes>>20)
	}
	if f.FileSize > kairos.MaxDownloadBytes {
		return nil, kairos.Errorf(kairos.EINVALID, "That file is too big: Telegram lets me download files up to %d MB.", kairos.MaxDownloadBytes>>20)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.api.base+"/file/bot"+b.api.token+"/"+f.FilePath, nil)
	if err != nil {
		return nil, &APIError{Method: "file download", Description: "bad file URL"}
	}
	resp, err := b.api.http.Do(req)
	if err != nil {
		return nil, &APIError{Method: "file download", Description: describeTransport(err)}
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &APIError{Method: "file download", Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
	}
	if resp.ContentLength > kairos.MaxDownloadBytes {
		resp.Body.Close()
		return nil, kairos.Errorf(kairos.EINVALID, "That file is too big: Telegram lets me download files up to %d MB.", kairos.MaxDownloadBytes>>20)
	}
	return &cappedBody{rc: resp.Body, left: kairos.MaxDownloadBytes}, nil
}

// cappedBody fails a download that runs past the limit instead of cutting
// it silently.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.rc.Read(one[:]); n > 0 {
			return 0, kairos.Errorf(kairos.EINVALID, "That file is too big: Telegram lets me download files up to %d MB.", kairos.MaxDownloadBytes>>20)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	if err != nil && err != io.EOF {
		err = &APIError{Method: "file download", Description: describeTransport(err)}
	}
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }
