package agent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/jsonfix"
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
			if end := jsonfix.End(visible, start); end > start {
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
	fixed := jsonfix.Repair(block)
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
		if fixed := jsonfix.Repair(x); json.Valid([]byte(fixed)) {
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
