// Package jsonfix reads the JSON that language models write: it repairs
// the usual slips (single quotes, trailing commas, Python literals, raw
// newlines in strings) and finds where an object ends inside prose. Both
// the agent's prompted tool calls and the research roles use it.
package jsonfix

import "strings"

// Repair fixes what models commonly get wrong in JSON: single-quoted
// strings and keys, trailing commas, Python's True/False/None, and
// literal newlines inside strings. Text inside double-quoted strings is
// left alone.
func Repair(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\'':
			i = copyString(&b, s, i)
		case ',':
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue // trailing comma
			}
			b.WriteByte(c)
		default:
			if w, lit := pythonLiteral(s, i); w > 0 {
				b.WriteString(lit)
				i += w - 1
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// copyString writes the string starting at s[i] (quoted with s[i]) as a
// double-quoted JSON string and returns the index of its closing quote.
func copyString(b *strings.Builder, s string, i int) int {
	q := s[i]
	b.WriteByte('"')
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s):
			if q == '\'' && s[j+1] == '\'' {
				b.WriteByte('\'')
			} else {
				b.WriteByte(c)
				b.WriteByte(s[j+1])
			}
			j++
		case c == q:
			b.WriteByte('"')
			return j
		case c == '"': // a double quote inside a single-quoted string
			b.WriteString(`\"`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return len(s)
}

func pythonLiteral(s string, i int) (int, string) {
	if i > 0 && isWordByte(s[i-1]) {
		return 0, ""
	}
	for _, pl := range pyLiterals {
		word, lit := pl[0], pl[1]
		if strings.HasPrefix(s[i:], word) && (i+len(word) == len(s) || !isWordByte(s[i+len(word)])) {
			return len(word), lit
		}
	}
	return 0, ""
}

var pyLiterals = [][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// End returns the index after the brace or bracket that closes the one
// at start, minding quoted strings (double or single quotes), or -1.
func End(s string, start int) int {
	depth, quote, esc := 0, byte(0), false
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case quote != 0 && c == '\\':
			esc = true
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
