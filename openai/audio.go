package openai

import (
	"context"
	"io"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/kairos-agent/kairos"
)

// Defaults of the audio endpoints.
const (
	DefaultTranscribeModel = "whisper-1"
	DefaultSpeechModel     = "tts-1"
	DefaultSpeechVoice     = "alloy"
)

// AudioConfig configures the audio endpoints of a Client.
type AudioConfig struct {
	// BaseURL of a separate transcription server (KAIROS_TRANSCRIBE_URL);
	// empty: the chat endpoint.
	BaseURL         string
	TranscribeModel string // default DefaultTranscribeModel
	SpeechModel     string // default DefaultSpeechModel
	Voice           string // default DefaultSpeechVoice
}

// Audio talks to /audio/transcriptions and /audio/speech. It implements
// kairos.Transcriber and kairos.Speaker.
type Audio struct {
	c      *Client
	tapi   *goopenai.Client // transcriptions (maybe another server)
	cfg    AudioConfig
	thost  string
	shared bool
}

var (
	_ kairos.Transcriber = (*Audio)(nil)
	_ kairos.Speaker     = (*Audio)(nil)
)

// Audio returns the audio endpoints of the client's server, or of
// cfg.BaseURL for transcription (with the same key and HTTP client).
func (c *Client) Audio(cfg AudioConfig) *Audio {
	if cfg.TranscribeModel == "" {
		cfg.TranscribeModel = DefaultTranscribeModel
	}
	if cfg.SpeechModel == "" {
		cfg.SpeechModel = DefaultSpeechModel
	}
	if cfg.Voice == "" {
		cfg.Voice = DefaultSpeechVoice
	}
	a := &Audio{c: c, tapi: c.api, cfg: cfg, thost: c.host, shared: true}
	if base := strings.TrimRight(cfg.BaseURL, "/"); base != "" {
		oc := goopenai.DefaultConfig(c.apiKey)
		oc.BaseURL = base
		oc.HTTPClient = c.doer
		a.tapi, a.thost, a.shared = goopenai.NewClientWithConfig(oc), hostOf(base), false
	}
	return a
}

// Transcribe sends the audio to /audio/transcriptions and returns the
// text. The reader is streamed into the multipart body once (go-openai
// builds the body in memory; the caller must not hold another copy).
func (a *Audio) Transcribe(ctx context.Context, fileName string, audio io.Reader) (string, error) {
	start := a.c.now()
	cctx, cancel, cp := a.c.call(ctx)
	defer cancel()
	if fileName == "" {
		fileName = "voice.ogg"
	}
	resp, err := a.tapi.CreateTranscription(cctx, goopenai.AudioRequest{Model: a.cfg.TranscribeModel, FilePath: fileName, Reader: audio})
	op := "transcribe " + a.cfg.TranscribeModel
	if err != nil {
		err = a.c.classify(ctx, cctx, op, cp, err)
		a.c.logFailure(op, err)
		return "", err
	}
	a.c.log.Debug("transcribe", "model", a.cfg.TranscribeModel, "duration", a.c.now().Sub(start), "chars", len(resp.Text))
	return strings.TrimSpace(resp.Text), nil
}

// Speak asks /audio/speech for Ogg/Opus audio of text (what Telegram's
// sendVoice takes). The caller closes the reader.
func (a *Audio) Speak(ctx context.Context, text string) (io.ReadCloser, error) {
	cctx, cancel, cp := a.c.call(ctx)
	resp, err := a.c.api.CreateSpeech(cctx, goopenai.CreateSpeechRequest{Model: goopenai.SpeechModel(a.cfg.SpeechModel),
		Input: text, Voice: goopenai.SpeechVoice(a.cfg.Voice), ResponseFormat: goopenai.SpeechResponseFormatOpus})
	op := "speech " + a.cfg.SpeechModel
	if err != nil {
		cancel()
		err = a.c.classify(ctx, cctx, op, cp, err)
		a.c.logFailure(op, err)
		return nil, err
	}
	return cancelOnClose{resp.ReadCloser, cancel}, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
