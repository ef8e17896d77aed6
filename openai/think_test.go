package openai

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// thoughtStream is a generated answer: its text, the answer a reader
// should get, and its shape.
type thoughtStream struct {
	text, answer string
	shape        string // "template": begins inside a thought the template opened; "tagged"; "absent"
}

// genThought writes a thought of a few words, sometimes holding a nested
// tagged thought.
func genThought(r *rand.Rand, b *strings.Builder, depth int) {
	for i, n := 0, 1+r.IntN(4); i < n; i++ {
		fmt.Fprintf(b, "ponder%d ", r.IntN(100))
		if depth < 2 && r.IntN(5) == 0 {
			tags := thinkTags[r.IntN(2)]
			b.WriteString(tags[0])
			genThought(r, b, depth+1)
			b.WriteString(tags[1])
		}
	}
}

// genStream generates an answer of the given shape: thoughts are made of
// ponderN words, the answer of replyN words.
func genStream(r *rand.Rand, shape string) thoughtStream {
	var b strings.Builder
	var answer []string
	if shape == "template" {
		genThought(r, &b, 1)
		b.WriteString([]string{"</think>", "</think>\n\n", "\n</think>"}[r.IntN(3)])
	}
	for i, n := 0, 1+r.IntN(5); i < n; i++ {
		if shape == "tagged" && (i == 0 || r.IntN(3) == 0) {
			tags := thinkTags[r.IntN(2)]
			b.WriteString(tags[0])
			genThought(r, &b, 1)
			b.WriteString(tags[1])
		}
		w := fmt.Sprintf("reply%d", r.IntN(100))
		answer = append(answer, w)
		b.WriteString(w + " ")
	}
	return thoughtStream{text: b.String(), answer: strings.Join(answer, " "), shape: shape}
}

// split cuts s at random places (a tag may be cut anywhere).
func split(r *rand.Rand, s string) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + r.IntN(min(len(s), 12))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// TestStreamShowsNoThought (issue 31, item 7): over random answers —
// thoughts opened by the chat template (only their </think> arrives),
// tagged thoughts, nested thoughts, no thoughts — each streamed from the
// fake OpenAI server in random chunks (tags cut anywhere), with what is
// known of the model (template, tagged, or nothing yet), no text shown
// while streaming is a thought or part of a tag, and the final answer is
// the answer.
func TestStreamShowsNoThought(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	modes := map[string][]string{
		"template": {kairos.ThinkingTemplate, ""},
		"tagged":   {kairos.ThinkingTagged, kairos.ThinkingTemplate, ""},
		"absent":   {kairos.ThinkingTagged, kairos.ThinkingTemplate, ""},
	}
	shown, leaked, runs := 0, 0, 0
	for seed := uint64(1); seed <= 120; seed++ {
		r := rand.New(rand.NewPCG(seed, 31))
		shape := []string{"template", "tagged", "absent"}[seed%3]
		st := genStream(r, shape)
		for _, mode := range modes[shape] {
			runs++
			model := fmt.Sprintf("model-%d-%s", seed, mode) // a fresh model: nothing learned yet
			f.Enqueue(testkit.Reply{Text: st.text, Chunks: split(r, st.text)})
			req := userReq(model, "hi")
			req.Thinking = mode
			var partials []string
			resp, err := c.Chat(testkit.Deadline(t), req, func(s string) { partials = append(partials, s) })
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range partials {
				shown++
				if strings.Contains(p, "ponder") || strings.Contains(p, "<") || strings.Contains(p, ">") {
					leaked++
					t.Errorf("seed %d, %s answer, thinking %q: streamed %q of %q", seed, shape, mode, p, st.text)
				}
			}
			if got := strings.Join(strings.Fields(resp.Message.Content), " "); got != st.answer {
				t.Errorf("seed %d, %s answer, thinking %q: final %q, want %q (from %q)", seed, shape, mode, got, st.answer, st.text)
			}
			if mode == kairos.ThinkingTagged && shape == "absent" && len(partials) == 0 {
				t.Errorf("seed %d: a model known to tag its thoughts streamed nothing", seed)
			}
		}
	}
	t.Logf("%d streams, %d partial texts shown, %d with thought text", runs, shown, leaked)
}

// TestStreamLearnsWhereThoughtsBegin: with nothing declared, a model's
// first answer is held back until a </think> tells; the client then knows
// the template opens thoughts and says so (kairos model check reads it).
// A model whose first whole answer held no closing tag streams the next
// one as it comes.
func TestStreamLearnsWhereThoughtsBegin(t *testing.T) {
	f := testkit.NewFakeOpenAI(t)
	c, _ := newClient(t, f)
	stream := func(model, text string) []string {
		var partials []string
		f.Enqueue(testkit.Reply{Text: text})
		if _, err := c.Chat(testkit.Deadline(t), userReq(model, "hi"), func(s string) { partials = append(partials, s) }); err != nil {
			t.Fatal(err)
		}
		return partials
	}
	for i := range 2 {
		for _, p := range stream("qwen3-thinking", "Okay, the user says hi. I should greet.</think>Hello there, friend!") {
			if strings.Contains(p, "greet") || strings.Contains(p, "user") {
				t.Fatalf("answer %d: thought streamed: %q", i+1, p)
			}
		}
		if got := c.Thinking("qwen3-thinking"); got != kairos.ThinkingTemplate {
			t.Fatalf("learned %q", got)
		}
	}
	if p := stream("plain-local", "Hello there, friend!"); len(p) != 0 || c.Thinking("plain-local") != kairos.ThinkingTagged {
		t.Fatalf("first answer of an unknown model streamed %q; learned %q", p, c.Thinking("plain-local"))
	}
	if p := stream("plain-local", "Hello again, my friend!"); len(p) < 2 {
		t.Fatalf("a model known not to open thoughts streamed %q", p)
	}
}

// TestTemplateAnswerCutWhileThinking: a template model's answer cut by
// the length limit before its </think> is all thought.
func TestTemplateAnswerCutWhileThinking(t *testing.T) {
	if v, th := finalThink("Okay, let me think about the user's", kairos.ThinkingTemplate, "length"); v != "" || th == "" {
		t.Fatalf("visible %q, thought %q", v, th)
	}
	if v, _ := finalThink("Hello!", kairos.ThinkingTemplate, "stop"); v != "Hello!" {
		t.Fatalf("a whole answer without thoughts (a reasoning parser took them) is %q", v)
	}
}
