package media

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// Prefs keeps per-user preferences (the settings table).
type Prefs interface {
	Setting(ctx context.Context, key string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
}

// maxSpeechChars is /audio/speech's input limit.
const maxSpeechChars = 4096

func voiceKey(in *kairos.Inbound) string { return "voice_replies:" + in.UserKey() }

// VoiceOffered reports whether /voice is offered under p.
func (h *Handler) VoiceOffered(p *kairos.Policy) bool {
	return p.Media.Enabled && p.Media.VoiceReplies && h.cfg.Speaker != nil && h.cfg.Prefs != nil
}

// VoiceCommand answers /voice [on|off]: spoken answers (besides the text)
// for this user, off by default.
func (h *Handler) VoiceCommand(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
	if !h.VoiceOffered(h.cfg.Policy()) {
		return "Voice replies are not available here.", nil
	}
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "on":
		if err := h.cfg.Prefs.SetSetting(ctx, voiceKey(in), "on"); err != nil {
			return "", err
		}
		return "Voice replies are on: I'll also send my answers as voice messages. Send /voice off to stop.", nil
	case "off":
		if err := h.cfg.Prefs.SetSetting(ctx, voiceKey(in), "off"); err != nil {
			return "", err
		}
		return "Voice replies are off: text only.", nil
	case "":
		if h.voiceOn(ctx, in) {
			return "Voice replies are on. Send /voice off to stop.", nil
		}
		return "Voice replies are off. Send /voice on to hear my answers too.", nil
	}
	return "", kairos.Errorf(kairos.EINVALID, "Usage: /voice on, /voice off, or /voice to see the setting.")
}

func (h *Handler) voiceOn(ctx context.Context, in *kairos.Inbound) bool {
	if !h.VoiceOffered(h.cfg.Policy()) {
		return false
	}
	v, err := h.cfg.Prefs.Setting(ctx, voiceKey(in))
	if err != nil {
		h.log.Warn("read voice preference", "err", err)
		return false
	}
	return v == "on"
}

// withVoice wraps out so the answer is also spoken, when the user turned
// voice replies on and the channel (orig) can send voice.
func (h *Handler) withVoice(ctx context.Context, in *kairos.Inbound, out, orig kairos.Replier) kairos.Replier {
	if vr, ok := orig.(kairos.VoiceReplier); ok && h.voiceOn(ctx, in) {
		return &voiceReplier{Replier: out, h: h, voice: vr, in: in}
	}
	return out
}

// voiceReplier sends the final answer as text, then speaks it.
type voiceReplier struct {
	kairos.Replier
	h     *Handler
	voice kairos.VoiceReplier
	in    *kairos.Inbound // whose answer it is (its spending caps)
}

func (r *voiceReplier) Final(ctx context.Context, text string) error {
	if err := r.Replier.Final(ctx, text); err != nil {
		return err
	}
	speech := speakable(text)
	if speech == "" {
		return nil
	}
	audio, err := r.h.cfg.Speaker.Speak(speakContext(ctx, r.in), speech)
	if _, capped := kairos.AsSpendRefusal(err); capped {
		r.h.log.Info("spoken answer skipped: a spending cap refused it")
		return nil // the text went out
	}
	if err != nil {
		r.h.log.Warn("speech failed", "err", err)
		r.h.cfg.Metrics.MediaFailure("speech", "provider")
		return nil // the text went out; the voice is a bonus
	}
	defer audio.Close()
	if err := r.voice.SendVoice(ctx, audio); err != nil {
		r.h.log.Warn("send voice failed", "err", err)
		r.h.cfg.Metrics.MediaFailure("speech", "send")
	}
	return nil
}

var mdStripper = strings.NewReplacer("**", "", "__", "", "`", "", "~~", "", "#", "", "> ", "", "\\", "")

// speakable is the answer as plain words: Markdown marks dropped, cut at
// the speech endpoint's limit on a sentence end where possible.
func speakable(text string) string {
	s := strings.TrimSpace(mdStripper.Replace(text))
	if utf8.RuneCountInString(s) <= maxSpeechChars {
		return s
	}
	r := []rune(s)[:maxSpeechChars]
	cut := string(r)
	if i := strings.LastIndexAny(cut, ".!?"); i > maxSpeechChars/2 {
		cut = cut[:i+1]
	}
	return cut
}
