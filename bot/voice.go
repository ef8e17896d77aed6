package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/kairos-agent/kairos"
)

var _ kairos.VoiceReplier = (*replier)(nil)

// maxVoiceUpload bounds a spoken answer (Telegram takes 50 MB; a spoken
// 4,096-character answer is well under 1 MB of Opus).
const maxVoiceUpload = 8 << 20

// SendVoice sends Ogg/Opus audio as a voice message with sendVoice, once
// (recorded in the outbox like a text part).
func (r *replier) SendVoice(ctx context.Context, audio io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(audio, maxVoiceUpload+1))
	if err != nil {
		return err
	}
	if len(data) > maxVoiceUpload {
		return kairos.Errorf(kairos.EINVALID, "the spoken answer is too long to send")
	}
	return r.uploadOnce(ctx, "voice", "sendVoice", "answer.ogg", data)
}

// uploadOnce uploads data as the turn's one file of its kind (field and
// outbox key "voice", "photo"…), once: recorded in the outbox like a text
// part (outboxSend), so a retried update does not send it again.
func (r *replier) uploadOnce(ctx context.Context, kind, method, name string, data []byte, extra ...string) error {
	_, err := r.b.outboxSend(ctx, r.in, r.outboxKey(kind), func(ctx context.Context) (int64, error) {
		id, err := r.b.api.upload(ctx, method, r.in, kind, name, data, extra...)
		if err == nil {
			r.b.cfg.Metrics.ReplySent(kind)
		}
		return id, err
	})
	return err
}

// upload posts a file as multipart/form-data (sendVoice, sendDocument).
// extra are more form fields as name, value pairs (a photo's caption).
func (c *client) upload(ctx context.Context, method string, in *kairos.Inbound, field, name string, data []byte, extra ...string) (int64, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("chat_id", strconv.FormatInt(in.ChatID, 10))
	for i := 0; i+1 < len(extra); i += 2 {
		w.WriteField(extra[i], extra[i+1])
	}
	if in.TopicID != 0 {
		w.WriteField("message_thread_id", strconv.FormatInt(in.TopicID, 10))
	}
	fw, err := w.CreateFormFile(field, name)
	if err != nil {
		return 0, err
	}
	fw.Write(data)
	if err := w.Close(); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, &body)
	if err != nil {
		return 0, &APIError{Method: method, Description: "bad request URL"}
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, &APIError{Method: method, Description: describeTransport(err)}
	}
	defer resp.Body.Close()
	var r apiResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		return 0, &APIError{Method: method, Code: resp.StatusCode, Description: "malformed answer from the Bot API"}
	}
	if !r.OK {
		return 0, &APIError{Method: method, Code: r.ErrorCode, Description: r.Description}
	}
	var msg struct {
		ID int64 `json:"message_id"`
	}
	json.Unmarshal(r.Result, &msg)
	return msg.ID, nil
}
