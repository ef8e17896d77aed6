package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

// Next answers the message once its files are read (the agent).
type Next interface {
	HandleMessage(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error
}

// Metrics receives media observations (may be nil).
type Metrics interface {
	// MediaFile counts a file read (kind: voice, photo, …) and its bytes.
	MediaFile(kind string, bytes int64)
	// Transcribed adds the length of transcribed audio.
	Transcribed(audio time.Duration)
	// MediaFailure counts a file that could not be read.
	MediaFailure(kind, reason string)
}

// Config wires a Handler.
type Config struct {
	Next        Next
	Transcriber kairos.Transcriber // nil: voice notes are refused
	Speaker     kairos.Speaker     // nil: no voice replies
	// TranscribeModel names the transcription model in usage records.
	TranscribeModel string
	// Sessions opens the session a transcription's usage is recorded in
	// (and records it when there is no Spend); optional.
	Sessions kairos.SessionStore
	// Spend, when set, admits every transcription and spoken answer: a
	// user at a spending cap gets the cap's sentence and nothing is
	// transcribed; a recording whose length cannot be read is refused
	// while a cap applies.
	Spend kairos.SpendGate
	// Clock records a message whose file was refused as an interaction
	// (the agent records the others); optional.
	Clock  kairos.ClockWrapper
	Prefs  Prefs // per-user /voice setting; nil: no voice replies
	Policy func() *kairos.Policy
	// DataDir is where media.store_images keeps images (under media/).
	DataDir string
	// VisionModel, when set, turns vision on whatever media.vision says
	// (the agent sends image turns to that model).
	VisionModel string
	Metrics     Metrics
	// Backoff returns the wait before retry `attempt` (1-based) of a
	// transcription; nil: exponential from 500 ms with jitter, honouring
	// Retry-After (as model calls).
	Backoff func(attempt int, retryAfter time.Duration) time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
}

// Handler reads a message's files, then hands it to Next.
type Handler struct {
	cfg  Config
	log  *slog.Logger
	gate *gate
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Policy == nil {
		p := kairos.DefaultPolicy()
		cfg.Policy = func() *kairos.Policy { return p }
	}
	if cfg.Metrics == nil {
		cfg.Metrics = nopMetrics{}
	}
	if cfg.Backoff == nil {
		cfg.Backoff = retry.Backoff
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, log: cfg.Logger.With("component", "media"), gate: newGate()}
}

// Vision reports whether image turns can be answered under p.
func (h *Handler) Vision(p *kairos.Policy) bool { return h.cfg.VisionModel != "" || p.Media.Vision }

// Sentences the user gets when a file cannot be used.
const (
	msgTranscribeFailed = "Sorry, I couldn't transcribe that voice message just now. Please try again in a minute, or type it."
	msgNoSpeech         = "I couldn't hear any words in that recording. Could you try again, or type it?"
	msgBadAudio         = "Sorry, I couldn't read that audio: the file seems damaged or is in a format I can't handle."
	msgNoTranscriber    = "I can't listen to voice messages here; please type what you'd like to say."
	msgNoVision         = "I can't look at images: the model I'm using here doesn't read pictures. Please describe what's in it, or ask my operator to turn vision on."
	msgUnsupported      = "I can't read %s files. I read voice notes, audio, photos and images, and text, Markdown, CSV, JSON and PDF documents."
	msgDownloadFailed   = "Sorry, I couldn't download that file from Telegram just now. Please send it again in a minute."
	msgDisabled         = "I only read text messages here; please type what you'd like me to know."
	msgTooBig           = "That file is %.1f MB; Telegram lets me download files up to %d MB. Please send a smaller one."
)

// HandleMessage reads the files of in, then calls Next; a file that
// cannot be read is answered with one sentence and the turn ends there.
func (h *Handler) HandleMessage(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
	if len(in.Attachments) == 0 {
		return h.cfg.Next.HandleMessage(ctx, in, h.withVoice(ctx, in, out, out))
	}
	orig := out
	pol := h.cfg.Policy()
	if !pol.Media.Enabled {
		return h.refuse(ctx, in, out, msgDisabled)
	}
	for _, a := range in.Attachments {
		kairos.ShowAction(ctx, out, chatAction(a))
		msg, err := h.read(ctx, pol, in, a)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if msg != "" {
			return h.refuse(ctx, in, out, msg)
		}
	}
	kairos.ShowAction(ctx, out, kairos.ActionTyping) // the model's turn now
	if in.Heard != "" && pol.Media.ShowTranscript {
		out = &heardReplier{Replier: out, quote: quoteHeard(in.Heard)}
	}
	return h.cfg.Next.HandleMessage(ctx, in, h.withVoice(ctx, in, out, orig))
}

// chatAction is what the chat shows while a is read: Telegram's
// record_voice while audio is transcribed, upload_document while a file
// is read, typing for images.
func chatAction(a *kairos.Attachment) string {
	switch classify(a) {
	case kindAudio:
		return kairos.ActionRecordVoice
	case kindText, kindPDF:
		return kairos.ActionUploadDocument
	}
	return kairos.ActionTyping
}

// read reads one attachment into in. It returns the sentence for the user
// when the file cannot be used, or an error for faults to log.
func (h *Handler) read(ctx context.Context, pol *kairos.Policy, in *kairos.Inbound, a *kairos.Attachment) (string, error) {
	if a.Size > kairos.MaxDownloadBytes { // known from the message: nothing is downloaded
		h.cfg.Metrics.MediaFailure(a.Kind, "too_big")
		return fmt.Sprintf(msgTooBig, float64(a.Size)/(1<<20), kairos.MaxDownloadBytes>>20), nil
	}
	kind := classify(a)
	switch kind {
	case kindAudio:
		return h.transcribe(ctx, pol, in, a)
	case kindImage:
		if !h.Vision(pol) {
			h.cfg.Metrics.MediaFailure(a.Kind, "no_vision")
			return msgNoVision, nil
		}
		if err := h.gate.enter(ctx, pol.Media.MaxParallelFiles); err != nil {
			return "", err
		}
		defer h.gate.leave()
		return h.image(ctx, pol, in, a)
	case kindText, kindPDF:
		if err := h.gate.enter(ctx, pol.Media.MaxParallelFiles); err != nil {
			return "", err
		}
		defer h.gate.leave()
		return h.document(ctx, pol, in, a, kind)
	default:
		h.cfg.Metrics.MediaFailure(a.Kind, "unsupported")
		return fmt.Sprintf(msgUnsupported, describeType(a)), nil
	}
}

// userError is the sentence of an EINVALID error, or "".
func userError(err error) string {
	if kairos.ErrorCode(err) == kairos.EINVALID {
		return kairos.ErrorMessage(err)
	}
	return ""
}

// transcribe downloads and transcribes a voice note, audio file or video
// note; the transcript becomes the user's text (the user's own words).
// The call is priced by the length read from the file and goes through
// the spending caps (spend.go). Each attempt streams the file anew from
// Telegram into the request, so the audio is held once, inside the
// request body, never twice.
func (h *Handler) transcribe(ctx context.Context, pol *kairos.Policy, in *kairos.Inbound, a *kairos.Attachment) (string, error) {
	if h.cfg.Transcriber == nil {
		h.cfg.Metrics.MediaFailure(a.Kind, "no_transcriber")
		return msgNoTranscriber, nil
	}
	m := &meter{h: h, in: in, a: a}
	if h.cfg.Spend != nil { // at a cap already: nothing is downloaded
		if r, capped := kairos.AsSpendRefusal(h.cfg.Spend.Admit(ctx, m.spendContext())); capped {
			return r.Message, nil
		}
	}
	text, msg, err := h.transcribeAttempts(ctx, pol, a, m)
	if msg != "" || err != nil {
		m.settle(ctx, false)
		return msg, err
	}
	h.cfg.Metrics.Transcribed(m.length)
	m.settle(ctx, true)
	in.Heard = text
	if in.Text != "" { // an audio file's caption
		text += "\n\n" + in.Text
	}
	in.Text = text
	return "", nil
}

// transcribeAttempts downloads and transcribes the file, retrying as the
// policy says; it returns the transcript, or the sentence for the user.
func (h *Handler) transcribeAttempts(ctx context.Context, pol *kairos.Policy, a *kairos.Attachment, m *meter) (string, string, error) {
	retries := max(pol.Agent.Retries, 0)
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			if err := retry.Wait(ctx, attempt, lastErr, h.cfg.Backoff); err != nil {
				return "", "", err
			}
		}
		rc, err := a.Open(ctx)
		if err != nil {
			if msg := userError(err); msg != "" {
				h.cfg.Metrics.MediaFailure(a.Kind, "too_big")
				return "", msg, nil
			}
			lastErr = err
			h.log.Warn("download failed", "kind", a.Kind, "attempt", attempt+1, "err", err)
			continue
		}
		cr := &countingReader{r: rc}
		lr := m.reader(ctx, cr)
		text, err := h.cfg.Transcriber.Transcribe(ctx, a.Name, lr)
		if err == nil && !m.admitted() && m.refusal == "" {
			_, _ = io.Copy(io.Discard, lr) // it answered before the end: the rest says the length
		}
		lr.close()
		rc.Close()
		if m.refusal != "" {
			return "", m.refusal, nil // refused at the end of the stream: no request was made
		}
		if err == nil {
			h.cfg.Metrics.MediaFile(a.Kind, cr.n)
			if strings.TrimSpace(text) == "" {
				h.cfg.Metrics.MediaFailure(a.Kind, "no_speech")
				return "", msgNoSpeech, nil
			}
			return text, "", nil
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		if msg := userError(err); msg != "" {
			h.cfg.Metrics.MediaFailure(a.Kind, "too_big")
			return "", msg, nil
		}
		lastErr = err
		h.log.Warn("transcription failed", "kind", a.Kind, "attempt", attempt+1, "err", err)
		var pe *kairos.ProviderError
		if errors.As(err, &pe) && !pe.Retryable {
			if pe.StatusCode == 400 {
				h.cfg.Metrics.MediaFailure(a.Kind, "bad_audio")
				return "", msgBadAudio, nil
			}
			break
		}
	}
	h.cfg.Metrics.MediaFailure(a.Kind, "transcription")
	return "", msgTranscribeFailed, nil
}

// refuse answers a file that could not be used with one sentence. The
// message still counts as an interaction for the clock (CLOCK.md: every
// user message is stamped), recorded as a note of the file, not its text.
func (h *Handler) refuse(ctx context.Context, in *kairos.Inbound, out kairos.Replier, msg string) error {
	if h.cfg.Clock != nil {
		note := *in
		note.Text = fileNote(in)
		if _, err := h.cfg.Clock.OnUserMessage(ctx, &note); err != nil {
			h.log.Warn("clock: record refused file", "err", err)
		}
	}
	if err := out.Final(ctx, msg); err != nil {
		return err
	}
	if h.cfg.Clock != nil {
		at := h.cfg.Now()
		if at.Before(in.Date) {
			at = in.Date
		}
		err := h.cfg.Clock.OnAgentMessage(ctx, &kairos.AgentMessage{Channel: in.Channel, ThreadKey: in.ThreadKey(),
			UserKey: in.UserKey(), SentAt: at, Text: msg})
		if err != nil {
			h.log.Warn("clock: record refusal", "err", err)
		}
	}
	return nil
}

// fileNote describes the message's files in words ("[voice note]").
func fileNote(in *kairos.Inbound) string {
	var parts []string
	for _, a := range in.Attachments {
		switch a.Kind {
		case kairos.AttachVoice, kairos.AttachVideoNote:
			parts = append(parts, "[voice note]")
		case kairos.AttachPhoto:
			parts = append(parts, "[photo]")
		default:
			parts = append(parts, "[file]")
		}
	}
	return strings.Join(parts, " ")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// quoteHeard renders the transcript as a Markdown quote, its Markdown
// characters escaped (they are the user's words, not formatting).
func quoteHeard(text string) string {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if i == 0 {
			b.WriteString("> 🎙 ")
		} else {
			b.WriteString("\n> ")
		}
		b.WriteString(escapeMarkdown(line))
	}
	return b.String()
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "~", `\~`, "[", `\[`, "]", `\]`)

func escapeMarkdown(s string) string { return mdEscaper.Replace(s) }

// heardReplier puts the transcript above the answer.
type heardReplier struct {
	kairos.Replier
	quote string
}

func (r *heardReplier) Partial(ctx context.Context, text string) {
	r.Replier.Partial(ctx, r.quote+"\n\n"+text)
}

func (r *heardReplier) Final(ctx context.Context, text string) error {
	return r.Replier.Final(ctx, r.quote+"\n\n"+text)
}

type nopMetrics struct{}

func (nopMetrics) MediaFile(string, int64)     {}
func (nopMetrics) Transcribed(time.Duration)   {}
func (nopMetrics) MediaFailure(string, string) {}
