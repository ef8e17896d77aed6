package testkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	goopenai "github.com/sashabaranov/go-openai"
)

// The Telegram fake's files, driven by go-telegram/bot as a real client.
func TestFakeTelegramFiles(t *testing.T) {
	f := NewFakeTelegram(t, "")
	b := newTestBot(t, f)
	ctx := Deadline(t)
	data := []byte("OggS voice bytes")
	ref := f.AddFile("voice", "file.oga", "audio/ogg", data)

	file, err := b.GetFile(ctx, &bot.GetFileParams{FileID: ref.FileID})
	if err != nil {
		t.Fatal(err)
	}
	if file.FileID != ref.FileID || file.FileUniqueID == "" || file.FileSize != int64(len(data)) || !strings.HasPrefix(file.FilePath, "voice/") {
		t.Fatalf("getFile = %+v", file)
	}
	resp, err := http.Get(b.FileDownloadLink(file))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, data) || resp.ContentLength != int64(len(data)) {
		t.Fatalf("download: %d %q", resp.StatusCode, got)
	}
	if d := f.Downloads(); len(d) != 1 || d[0] != file.FilePath {
		t.Fatalf("downloads = %q", d)
	}

	// A wrong token or path is 404; a file over 20 MB has no file_path.
	bad := strings.Replace(b.FileDownloadLink(file), f.Token(), "1:wrong", 1)
	if resp, err := http.Get(bad); err != nil || resp.StatusCode != 404 {
		t.Fatalf("wrong token: %v %v", resp, err)
	}
	big := f.AddLargeFile("documents", "big.pdf", "application/pdf", 21<<20)
	if _, err := b.GetFile(ctx, &bot.GetFileParams{FileID: big.FileID}); err == nil || !strings.Contains(err.Error(), "file is too big") {
		t.Fatalf("big file: %v", err)
	}
	if _, err := b.GetFile(ctx, &bot.GetFileParams{FileID: "nope"}); err == nil || !strings.Contains(err.Error(), "invalid file_id") {
		t.Fatalf("unknown id: %v", err)
	}
}

// Media messages decode into go-telegram/bot's models as real ones do.
func TestFakeTelegramMediaMessages(t *testing.T) {
	f := NewFakeTelegram(t, "")
	ref := f.AddFile("photos", "p.jpg", "image/jpeg", []byte{0xff, 0xd8})
	doc := f.AddFile("documents", "a.pdf", "application/pdf", []byte("%PDF-1.4"))
	f.PushPhoto(7, 7, ref, 1280, 960, "look", time.Unix(1700000000, 0))
	f.PushDocument(7, 7, doc, "", time.Unix(1700000001, 0))
	f.PushVoice(7, 7, f.AddFile("voice", "v.oga", "", []byte("OggS")), 3, time.Unix(1700000002, 0))
	var ups []models.Update
	raw, err := f.dispatch(Deadline(t), "getUpdates", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(raw)
	if err := json.Unmarshal(js, &ups); err != nil || len(ups) != 3 {
		t.Fatalf("updates: %v %s", err, js)
	}
	p := ups[0].Message
	if len(p.Photo) != 2 || p.Photo[1].Width != 1280 || p.Photo[0].Width != 90 || p.Photo[1].FileID != ref.FileID || p.Caption != "look" {
		t.Fatalf("photo message = %+v", p)
	}
	if d := ups[1].Message.Document; d == nil || d.FileName != "a.pdf" || d.MimeType != "application/pdf" || d.FileSize != 8 {
		t.Fatalf("document = %+v", d)
	}
	if v := ups[2].Message.Voice; v == nil || v.Duration != 3 || v.MimeType != "audio/ogg" {
		t.Fatalf("voice = %+v", v)
	}
}

// The OpenAI fake's audio endpoints, driven by go-openai.
func TestFakeOpenAIAudio(t *testing.T) {
	f := NewFakeOpenAI(t)
	c := newOpenAIClient(f, "")
	ctx := Deadline(t)
	f.EnqueueTranscript("hello there")
	r, err := c.CreateTranscription(ctx, goopenai.AudioRequest{Model: "whisper-1", FilePath: "v.ogg", Reader: strings.NewReader("OggS\x00rest")})
	if err != nil || r.Text != "hello there" {
		t.Fatalf("transcription: %q %v", r.Text, err)
	}
	_, err = c.CreateTranscription(ctx, goopenai.AudioRequest{Model: "whisper-1", FilePath: "v.ogg", Reader: strings.NewReader("garbage")})
	var apiErr *goopenai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || !strings.Contains(apiErr.Message, "corrupted or unsupported") {
		t.Fatalf("corrupt audio: %v", err)
	}
	f.EnqueueTranscript("plain")
	r, err = c.CreateTranscription(ctx, goopenai.AudioRequest{Model: "whisper-1", FilePath: "v.wav", Format: goopenai.AudioResponseFormatText,
		Reader: strings.NewReader("RIFF\x00\x00\x00\x00WAVEfmt ")})
	if err != nil || strings.TrimSpace(r.Text) != "plain" {
		t.Fatalf("text format: %q %v", r.Text, err)
	}
	trs := f.TranscriptionRequests()
	if len(trs) != 3 || trs[0].Magic != "ogg" || trs[0].Bytes != 9 || trs[1].Status != 400 || trs[2].Magic != "wav" {
		t.Fatalf("recorded = %+v", trs)
	}

	sp, err := c.CreateSpeech(ctx, goopenai.CreateSpeechRequest{Model: goopenai.TTSModel1, Input: "hi", Voice: goopenai.VoiceAlloy, ResponseFormat: goopenai.SpeechResponseFormatOpus})
	if err != nil {
		t.Fatal(err)
	}
	audio, _ := io.ReadAll(sp)
	sp.Close()
	if !bytes.HasPrefix(audio, []byte("OggS")) || len(f.SpeechRequests()) != 1 {
		t.Fatalf("speech = %q", audio)
	}
	if _, err := c.CreateSpeech(ctx, goopenai.CreateSpeechRequest{Model: goopenai.TTSModel1, Voice: goopenai.VoiceAlloy}); err == nil {
		t.Fatal("speech without input accepted")
	}
}

// Image parts of a chat request are recorded.
func TestFakeOpenAIImageParts(t *testing.T) {
	f := NewFakeOpenAI(t)
	c := newOpenAIClient(f, "")
	_, err := c.CreateChatCompletion(Deadline(t), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []goopenai.ChatCompletionMessage{{
		Role: "user", MultiContent: []goopenai.ChatMessagePart{
			{Type: goopenai.ChatMessagePartTypeText, Text: "what is this?"},
			{Type: goopenai.ChatMessagePartTypeImageURL, ImageURL: &goopenai.ChatMessageImageURL{URL: "data:image/jpeg;base64,AAAA"}},
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	m := f.LastRequest().Messages[0]
	if m.Content != "what is this?" || len(m.Images) != 1 || m.Images[0] != "data:image/jpeg;base64,AAAA" {
		t.Fatalf("recorded message = %+v", m)
	}
}
