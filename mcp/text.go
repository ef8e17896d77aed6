package mcp

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/kairos-agent/kairos"
)

// asData prepares text a server wrote (a tool's description, a parameter's
// description, an enum value) for the model as data: line breaks and tabs
// become spaces; control characters and Unicode format characters
// (bidirectional overrides and isolates, zero-width characters, the
// invisible tag characters U+E0000-U+E007F) are removed, so nothing in it
// is hidden from the operator who reads `kairos mcp check` or reordered on
// screen; runs of spaces become one; the result is clipped to limit bytes
// (and "…").
func asData(s string, limit int) string {
	s = ansiEscape.ReplaceAllString(strings.ToValidUTF8(s, ""), "")
	var b strings.Builder
	b.Grow(min(len(s), limit+8))
	space := false
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029' || unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case invisible(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() > limit+8 {
			break // enough to clip
		}
	}
	return kairos.Clip(b.String(), limit)
}

// ansiEscape matches terminal escape sequences (colours, cursor moves),
// removed whole rather than leaving "[31m" behind their ESC.
var ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])`)

// hidden reports whether s holds a character asData would remove: such a
// name cannot be cleaned without changing what the server expects.
func hidden(s string) bool {
	for _, r := range s {
		if invisible(r) || unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

// invisible reports whether asData removes r: a control or Unicode format
// character.
func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }
