package agent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/kairos-agent/kairos"
)

// parsePromptedCalls reads the tool calls out of a prompted answer. It
// accepts, in order of trust: <tool_call> blocks (Hermes, Qwen), code
// fences, an answer that is only JSON, and a {"name": …} object inside
// the text. Each JSON text is repaired first (trailing commas, single
// quotes, Python literals) and may hold several calls: an array, one
// object per line, or {"tool_calls": [...]}. Outside <tool_call> tags a
// call counts only when it names a known tool, so an answer that merely
// shows JSON is not taken for a call. It returns the text without the
// calls and the calls, each with a fresh id.
func parsePromptedCalls(text string, known func(string) bool) (string, []kairos.ToolCall) {
	var calls []kairos.ToolCall
	visible := text
	for _, src := range callSources {
		for _, m := range src.re.FindAllStringSubmatchIndex(visible, -1) {
			block := visible[m[2]:m[3]]
			found := decodeCalls(block)
			if !src.tagged {
				found = onlyKnown(found, known)
			}
			if len(found) == 0 {
				continue
			}
			calls = append(calls, found...)
			visible = visible[:m[0]] + strings.Repeat("\x00", m[1]-m[0]) + visible[m[1]:]
		}
		if len(calls) > 0 {
			break
		}
	}
	if len(calls) == 0 {
		if start := embeddedCall(visible); start >= 0 {
			if end := matchingBrace(visible, start); end > start {
				if found := onlyKnown(decodeCalls(visible[start:end]), known); len(found) > 0 {
					calls = found
					visible = visible[:start] + visible[end:]
				}
			}
		}
	}
	visible = strings.TrimSpace(strings.ReplaceAll(visible, "\x00", ""))
	for i := range calls {
		calls[i].ID = "call_" + kairos.NewID()
	}
	return visible, calls
}

type callSource struct {
	re     *regexp.Regexp
	tagged bool
}

var callSources = []callSource{
	{regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`), true},
	{regexp.MustCompile(`(?s)<function_call>\s*(.*?)\s*(?:</function_call>|$)`), true},
	{regexp.MustCompile(`(?s)\[TOOL_CALLS\]\s*(\[.*\])`), true},                        // Mistral
	{regexp.MustCompile(`(?s)<\|python_tag\|>\s*(\{.*\})\s*(?:<\|eom_id\|>|$)`), true}, // Llama 3.1+
	{regexp.MustCompile("(?s)```[a-zA-Z_]*\\s*\n?(.*?)```"), false},
	{regexp.MustCompile(`(?s)^\s*([\[{].*[\]}])\s*$`), false},
}

var embeddedRe = regexp.MustCompile(`\{\s*["']name["']\s*:`)

func embeddedCall(s string) int {
	if loc := embeddedRe.FindStringIndex(s); loc != nil {
		return loc[0]
	}
	return -1
}

// matchingBrace returns the index after the brace that closes the one at
// start, minding strings, or -1.
func matchingBrace(s string, start int) int {
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

func onlyKnown(calls []kairos.ToolCall, known func(string) bool) []kairos.ToolCall {
	out := calls[:0]
	for _, c := range calls {
		if known != nil && known(c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// decodeCalls repairs a JSON text and reads every call in it.
func decodeCalls(block string) []kairos.ToolCall {
	fixed := repairJSON(block)
	dec := json.NewDecoder(strings.NewReader(fixed))
	dec.UseNumber()
	var out []kairos.ToolCall
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		out = append(out, callsOf(v)...)
	}
	return out
}

// callsOf reads calls from a decoded value: a call object, a list of
// them, {"tool_calls": [...]} or OpenAI's {"function": {...}} shape.
func callsOf(v any) []kairos.ToolCall {
	switch x := v.(type) {
	case []any:
		var out []kairos.ToolCall
		for _, item := range x {
			out = append(out, callsOf(item)...)
		}
		return out
	case map[string]any:
		if tcs, ok := x["tool_calls"]; ok {
			return callsOf(tcs)
		}
		if fn, ok := x["function"].(map[string]any); ok {
			return callsOf(fn)
		}
		name, _ := x["name"].(string)
		if name == "" {
			name, _ = x["tool"].(string)
		}
		if name == "" {
			return nil
		}
		args, ok := x["arguments"]
		if !ok {
			args, ok = x["parameters"]
		}
		if !ok {
			args = x["args"]
		}
		return []kairos.ToolCall{{Name: name, Arguments: argumentsText(args)}}
	}
	return nil
}

func argumentsText(a any) string {
	switch x := a.(type) {
	case nil:
		return "{}"
	case string:
		if fixed := repairJSON(x); json.Valid([]byte(fixed)) {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(fixed)) == nil {
				return buf.String()
			}
		}
		b, _ := json.Marshal(x)
		return string(b)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// repairJSON fixes what models commonly get wrong in JSON: single-quoted
// strings and keys, trailing commas, Python's True/False/None, and
// literal newlines inside strings. Text inside double-quoted strings is
// left alone.
func repairJSON(s string) string {
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
