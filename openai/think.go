package openai

import (
	"strings"

	"github.com/kairos-agent/kairos"
)

// Reasoning models served by llama.cpp, Ollama, vLLM and LM Studio often
// write their thoughts into the answer between <think> and </think>
// (DeepSeek-R1 distills, Qwen3, QwQ). DeepSeek's own API and vLLM with a
// reasoning parser send them as reasoning_content instead. Either way they
// are neither shown nor stored: only the text outside them is the answer.
//
// Some chat templates (Qwen3's thinking models, the R1 distills) put
// <think> in the prompt, so the answer starts inside a thought and only
// its </think> arrives. While an answer streams, nothing is shown until
// it is known not to be a thought (streamVisible): when the model is
// known to begin its thoughts with their own tag (kairos.ThinkingTagged),
// or once a </think> closed the thought the template opened.

var thinkTags = [][2]string{{"<think>", "</think>"}, {"<thinking>", "</thinking>"}}

// nextTag finds the first thinking tag in s at or after from: where it
// starts, its length and whether it opens a thought (at < 0: none).
func nextTag(s string, from int) (at, n int, open bool) {
	at = -1
	for _, t := range thinkTags {
		for k, tag := range t {
			if j := strings.Index(s[from:], tag); j >= 0 && (at < 0 || from+j < at) {
				at, n, open = from+j, len(tag), k == 0
			}
		}
	}
	return at, n, open
}

// deficit is how many thoughts s closes that it never opened: the most,
// over its prefixes, by which closing tags outnumber opening ones. A text
// that starts inside a thought its chat template opened has 1.
func deficit(s string) int {
	depth, most := 0, 0
	for i := 0; ; {
		at, n, open := nextTag(s, i)
		if at < 0 {
			return most
		}
		if open {
			depth--
		} else {
			depth++
		}
		most = max(most, depth)
		i = at + n
	}
}

// parseThink splits s, which begins start thoughts deep, into the text
// outside thoughts and the thoughts. Tags nest: an opening tag deepens
// the thought, a closing one ends a level; a closing tag outside any
// thought is dropped, and a thought never closed runs to the end (the
// answer was cut while the model was thinking).
func parseThink(s string, start int) (visible, thought string) {
	if start == 0 && !strings.Contains(s, "<think") && !strings.Contains(s, "</think") {
		return s, ""
	}
	var vis, th strings.Builder
	depth := start
	for i := 0; ; {
		at, n, open := nextTag(s, i)
		end := at
		if at < 0 {
			end = len(s)
		}
		if depth > 0 {
			th.WriteString(s[i:end])
		} else {
			vis.WriteString(s[i:end])
		}
		if at < 0 {
			break
		}
		switch {
		case open:
			depth++
		case depth > 0:
			depth--
		}
		i = at + n
	}
	return strings.TrimSpace(vis.String()), strings.TrimSpace(th.String())
}

// splitThink returns a whole answer without its thoughts, and the
// thoughts: a closing tag before its opening one means the answer began
// inside a thought (the chat template opened it).
func splitThink(s string) (visible, thought string) { return parseThink(s, deficit(s)) }

// finalThink is splitThink for a finished answer of a model whose
// thoughts begin as thinking says: a template model's answer cut by the
// length limit before any </think> is all thought.
func finalThink(s, thinking, finish string) (visible, thought string) {
	if thinking == kairos.ThinkingTemplate && finish == "length" && deficit(s) == 0 {
		return "", strings.TrimSpace(s)
	}
	return splitThink(s)
}

// streamVisible is what of a growing streamed answer may be shown: the
// text known not to be a thought, without a trailing partial tag. A model
// whose template opens <think> shows nothing before a </think>; one not
// yet known (thinking "") shows nothing until a </think> closes a thought
// it never opened, which tells.
func streamVisible(s, thinking string) string {
	if cut := cutPartialTag(s); len(cut) < len(s) {
		s = strings.TrimRight(cut, " \n")
	}
	d := deficit(s)
	switch {
	case thinking == kairos.ThinkingTemplate:
		d = max(d, 1)
	case thinking != kairos.ThinkingTagged && d == 0:
		return "" // unknown: held back until it is known
	}
	v, _ := parseThink(s, d)
	return v
}

// cutPartialTag drops a trailing "<", "</thi", "<think"… that the next
// chunk may complete into a tag.
func cutPartialTag(s string) string {
	for i := max(0, len(s)-len("</thinking>")+1); i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		for _, t := range thinkTags {
			if strings.HasPrefix(t[0], s[i:]) || strings.HasPrefix(t[1], s[i:]) {
				return s[:i]
			}
		}
	}
	return s
}

// learnThinking records where the model's thoughts begin, from a finished
// answer: a thought closed but never opened means the template opens it
// (kept for good); a whole answer without one means it does not.
func (q *quirkMemory) learnThinking(model, content, finish string) {
	switch {
	case deficit(content) > 0:
		q.update(model, func(m *modelQuirks) { m.thinking = kairos.ThinkingTemplate })
	case strings.TrimSpace(content) != "" && (finish == "stop" || finish == "tool_calls"):
		q.update(model, func(m *modelQuirks) {
			if m.thinking == "" {
				m.thinking = kairos.ThinkingTagged
			}
		})
	}
}

// Thinking is what the client learned, from the answers it has read, of
// where model's thoughts begin (kairos.ThinkingTemplate or
// ThinkingTagged), or "" when none has told yet.
func (c *Client) Thinking(model string) string { return c.quirks.get(model).thinking }
