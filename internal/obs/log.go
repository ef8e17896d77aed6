package obs

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/kairos-agent/kairos/internal/redact"
)

// RedactingHandler wraps a slog.Handler and scrubs every secret (the bot
// token, API keys, KAIROS_SECRET_* values and their encodings) out of the
// message and all string attributes, so no call site can leak one by
// mistake.
type RedactingHandler struct {
	next  slog.Handler
	red   *redact.Redactor
	short []string // secrets masked as whole values only
}

// wholeWordBelow: a secret shorter than this is masked only where it
// stands as a whole value (not flanked by letters or digits), so a short
// secret such as "admin" does not blank out "administrator" or "kairos"
// every log line; longer ones (tokens, keys) are masked wherever they
// appear, in any encoding the Redactor knows.
const wholeWordBelow = 12

// NewRedactingHandler returns a handler that scrubs secrets before next.
func NewRedactingHandler(next slog.Handler, secrets []string) *RedactingHandler {
	var long, short []string
	for _, s := range secrets {
		if len(s) < wholeWordBelow {
			short = append(short, s)
		} else {
			long = append(long, s)
		}
	}
	return &RedactingHandler{next: next, red: redact.NewLog(long), short: short}
}

// scrub masks the long secrets anywhere and the short ones where they
// stand as whole values.
func (h *RedactingHandler) scrub(s string) string {
	s = h.red.Scrub(s)
	for _, w := range h.short {
		s = maskWhole(s, w)
	}
	return s
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// maskWhole replaces each occurrence of w in s that no letter or digit
// touches on either side.
func maskWhole(s, w string) string {
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(s[i:], w)
		if j < 0 {
			break
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			b.WriteString(s[i:j])
			b.WriteString(redact.Redacted)
		} else {
			b.WriteString(s[i:end])
		}
		i = end
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
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
	if h.red.Empty() && len(h.short) == 0 {
		return h.next.Handle(ctx, r)
	}
	nr := slog.NewRecord(r.Time, r.Level, h.scrub(r.Message), r.PC)
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
		return slog.String(a.Key, h.scrub(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, g := range as {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.scrub(err.Error()))
		}
		return slog.String(a.Key, h.scrub(v.String()))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}

func (h *RedactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(out), red: h.red, short: h.short}
}

func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(name), red: h.red, short: h.short}
}
