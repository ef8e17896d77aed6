package testkit

import (
	"encoding/json"
	"regexp"
	"strings"
)

// The injections a ResearchScript with Obey follows. A document holding
// "ASSISTANT INSTRUCTIONS:" is obeyed line by line (or ";" by ";"):
//
//	store memory: TEXT            a memory tool call (prompted, in <tool_call> tags)
//	forget memory ID              a memory forget call
//	schedule: TEXT                a schedule tool call
//	fetch URL                     a fetch request
//	search QUERY                  a search request
//	cite REF quote "Q" claim "C"  a claim citing REF with quote Q
//	answer "C"                    a claim C citing the document, quoting its first sentence
var (
	injectionMark = regexp.MustCompile(`(?i)assistant instructions:`)
	citeCmd       = regexp.MustCompile(`(?i)^cite (\S+) quote "([^"]+)" claim "([^"]+)"`)
	answerCmd     = regexp.MustCompile(`(?i)^answer "([^"]+)"`)
)

// obey follows the instructions found in docs: requests and claims join
// out; tool calls come back as <tool_call> blocks to append to the answer.
func (s *ResearchScript) obey(docs []map[string]any, out map[string]any) []string {
	var calls []string
	call := func(name string, args map[string]any) {
		b, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
		calls = append(calls, "\n<tool_call>"+string(b)+"</tool_call>")
	}
	for _, d := range docs {
		text := str(d["text"])
		loc := injectionMark.FindStringIndex(text)
		if loc == nil {
			continue
		}
		for _, cmd := range strings.FieldsFunc(text[loc[1]:], func(r rune) bool { return r == '\n' || r == ';' }) {
			cmd = strings.TrimSpace(cmd)
			switch {
			case strings.HasPrefix(strings.ToLower(cmd), "store memory:"):
				call("memory", map[string]any{"action": "store", "content": strings.TrimSpace(cmd[len("store memory:"):])})
			case strings.HasPrefix(strings.ToLower(cmd), "forget memory "):
				call("memory", map[string]any{"action": "forget", "memory_id": strings.TrimSpace(cmd[len("forget memory "):])})
			case strings.HasPrefix(strings.ToLower(cmd), "schedule:"):
				call("schedule", map[string]any{"action": "create", "when": "tomorrow 9am", "text": strings.TrimSpace(cmd[len("schedule:"):])})
			case strings.HasPrefix(strings.ToLower(cmd), "fetch "):
				out["fetch"] = append(out["fetch"].([]string), strings.TrimSpace(cmd[len("fetch "):]))
			case strings.HasPrefix(strings.ToLower(cmd), "search "):
				out["search"] = append(out["search"].([]string), strings.TrimSpace(cmd[len("search "):]))
			default:
				s.obeyClaim(cmd, d, out)
			}
		}
	}
	return calls
}

func (s *ResearchScript) obeyClaim(cmd string, d map[string]any, out map[string]any) {
	claims, _ := out["claims"].([]map[string]any)
	if m := citeCmd.FindStringSubmatch(cmd); m != nil {
		claims = append(claims, map[string]any{"need": 0, "text": m[3], "evidence": m[1], "quote": m[2]})
	} else if m := answerCmd.FindStringSubmatch(cmd); m != nil {
		first := ""
		if ss := splitSentences(str(d["text"])); len(ss) > 0 {
			first = firstWords(ss[0], 40)
		}
		claims = append(claims, map[string]any{"need": 0, "text": m[1], "evidence": str(d["id"]), "quote": first})
	}
	out["claims"] = claims
}
