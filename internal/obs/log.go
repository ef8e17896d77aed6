package obs

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/kairos-agent/kairos"
)

// RedactingHandler wraps a slog.Handler and scrubs every secret (the bot
// token, API keys, KAIROS_SECRET_* values and their encodings) out of the
// message and all string attributes, so no call site can leak one by
// mistake.
type RedactingHandler struct {
	next slog.Handler
	red  *kairos.Redactor
}

// NewRedactingHandler returns a handler that scrubs secrets before next.
func NewRedactingHandler(next slog.Handler, secrets []string) *RedactingHandler {
	return &RedactingHandler{next: next, red: kairos.NewRedactor(secrets)}
}

// NewLogger builds the process logger: text or json to w, redacting secrets.
func NewLogger(w io.Writer, format string, level slog.Level, secrets []string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if strings.EqualFold(format, "json") {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(NewRedactingHandler(h, secrets))
}

func (h *RedactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *RedactingHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.red.Empty() {
		return h.next.Handle(ctx, r)
	}
	nr := slog.NewRecord(r.Time, r.Level, h.red.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, nr)
}

func (h *RedactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.red.Scrub(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, g := range as {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.red.Scrub(err.Error()))
		}
		return slog.String(a.Key, h.red.Scrub(v.String()))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}

func (h *RedactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(out), red: h.red}
}

func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(name), red: h.red}
}
