package research

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos/internal/jsonfix"
)

// Reading what models write: the roles answer with JSON, but local models
// wrap it in prose, code fences or <tool_call> tags, and slip on quotes
// and commas. looseObjects finds every JSON object in a text, repaired;
// the helpers below read fields whatever type the model gave them.

var (
	thinkRe    = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fenceRe    = regexp.MustCompile("(?s)```[a-zA-Z_]*\\s*\n?(.*?)```")
	toolCallRe = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`)
)

// looseObjects returns the JSON objects of text, outermost first: those in
// <tool_call> tags and code fences, then any other object in the prose.
func looseObjects(text string) []map[string]any {
	text = thinkRe.ReplaceAllString(text, "")
	var out []map[string]any
	var blocks []string
	for _, re := range []*regexp.Regexp{toolCallRe, fenceRe} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			blocks = append(blocks, text[m[2]:m[3]])
			text = text[:m[0]] + strings.Repeat(" ", m[1]-m[0]) + text[m[1]:]
		}
	}
	blocks = append(blocks, text)
	for _, b := range blocks {
		for i := 0; i < len(b); i++ {
			if b[i] != '{' {
				continue
			}
			end := jsonfix.End(b, i)
			if end < 0 {
				continue
			}
			var v map[string]any
			if json.Unmarshal([]byte(jsonfix.Repair(b[i:end])), &v) == nil {
				out = append(out, v)
				i = end - 1
			}
		}
	}
	return out
}

// firstWith returns the first object holding any of the keys.
func firstWith(objs []map[string]any, keys ...string) map[string]any {
	for _, o := range objs {
		for _, k := range keys {
			if _, ok := o[k]; ok {
				return o
			}
		}
	}
	return nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// num reads an index: 2, 2.0, "2", "#2" or "E2" are all 2; -1 when none.
func num(v any) int {
	switch x := v.(type) {
	case float64:
		if x >= 0 && x == float64(int(x)) {
			return int(x)
		}
	case string:
		x = strings.TrimLeft(strings.TrimSpace(x), "#EeCc")
		if n, err := strconv.Atoi(x); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

// strs reads a list of strings, or one string as a list of one.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		if s := strings.TrimSpace(x); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, it := range x {
			if s := str(it); s != "" {
				out = append(out, s)
			} else if m, ok := it.(map[string]any); ok {
				for _, k := range []string{"query", "url", "q"} {
					if s := str(m[k]); s != "" {
						out = append(out, s)
						break
					}
				}
			}
		}
		return out
	}
	return nil
}

func objs(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
