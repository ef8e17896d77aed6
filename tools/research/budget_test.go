package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/tools/research"
)

// Every budget stops research where it runs out: the answer keeps what
// was checked so far, says it stopped and what it spent, and never spends
// past the budget.
func TestBudgetsStopResearch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    func(b *kairos.ResearchBudget)
		reason string
	}{
		{"rounds", func(b *kairos.ResearchBudget) { b.Rounds = 1 }, "rounds"},
		{"retrievals", func(b *kairos.ResearchBudget) { b.ToolCalls = 2 }, "retrievals"},
		{"researcher tokens", func(b *kairos.ResearchBudget) { b.Tokens.Researcher = 700 }, "researcher"},
		{"verifier tokens", func(b *kairos.ResearchBudget) { b.Tokens.Verifier = 200 }, "verifier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			tc.set(&r.pol.Research.Budgets.Normal)
			r.remember("My sister Ana lives in Tarn.", r.now.AddDate(0, -1, 0))
			r.file("places/tarn.md", "# Tarn\nTarn had a population of 45,870 at the 2025 census.")
			r.file("places/varn.md", "# Varn\nVarn had a population of 3,100 at the 2025 census.")
			res := r.ask("What is the population of the town where my sister Ana lives, and how long is the Kestrel River?")
			b := r.pol.Research.Budgets.Normal
			if res.Status != kairos.ResearchOverBudget || !strings.Contains(res.Stopped, tc.reason) || !strings.Contains(res.Answer, "stopped early") ||
				!strings.Contains(res.Answer, "Spent: ") || !strings.Contains(res.Answer, fmt.Sprintf("of %d rounds", b.Rounds)) {
				t.Fatalf("status %s, stopped %q, answer %q", res.Status, res.Stopped, res.Answer)
			}
			s := res.Spend
			if s.Rounds > b.Rounds || s.ToolCalls > b.ToolCalls || s.Overruns != 0 || s.Stages[research.StageResearcher] > b.Tokens.Researcher ||
				s.Stages[research.StageVerifier] > b.Tokens.Verifier || s.Stages[research.StagePlanner] > b.Tokens.Planner {
				t.Fatalf("spent past the budget: %+v of %+v", s, b)
			}
			if s.Calls == 0 || s.Tokens == 0 {
				t.Fatalf("spend not counted: %+v", s)
			}
		})
	}
}

// A search asked for again is refused; a Researcher that answers the
// same in two rounds is stopped by the loop breaker instead of running
// out the budget.
func TestRepeatsAreRefused(t *testing.T) {
	r := newRig(t)
	for i := 1; i <= 4; i++ {
		r.file(fmt.Sprintf("places/tarn%d.md", i), fmt.Sprintf("# Tarn %d\nThe river by Tarn, page %d.", i, i))
		r.file(fmt.Sprintf("misc/notes%d.md", i), fmt.Sprintf("# Misc %d\nMisc notes, page %d.", i, i))
	}
	var calls atomic.Int32
	r.model.SetChat(func(_ context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		if strings.Contains(req.Messages[0].Content, "ROLE: researcher") {
			calls.Add(1)
			return mock.Answer(req, `{"claims": [], "search": ["misc notes", "river flows through Tarn"], "fetch": []}`), nil
		}
		return mock.Answer(req, r.script.Reply(req.Messages[0].Content, req.Messages[1].Content)), nil
	})
	r.pol.Research.Tiers = []string{kairos.TierOffline}
	res := r.ask("Which river flows through Tarn?")
	_, st := r.trace(res.TraceID)
	refused, _ := json.Marshal(st["refused"])
	notes, _ := json.Marshal(st["notes"])
	if !strings.Contains(string(refused), `repeated search \"river flows through Tarn\"`) || !strings.Contains(string(notes), "repeated itself") {
		t.Fatalf("refusals %s, notes %s", refused, notes)
	}
	if n := calls.Load(); n != 2 || res.Spend.Rounds != 2 {
		t.Fatalf("the Researcher was asked %d times (rounds %d)", n, res.Spend.Rounds)
	}
}

// A trace cut short (the process stopped) resumes at the next ask of the
// same question: nothing already searched is searched again, and the
// wall time spent before counts.
func TestTraceResumesAfterRestart(t *testing.T) {
	r := newRig(t)
	r.remember("My sister Ana lives in Tarn.", r.now.AddDate(0, -1, 0))
	r.file("places/tarn.md", "# Tarn\nTarn had a population of 45,870 at the 2025 census.")
	ctx, cancel := context.WithCancel(context.Background())
	var verifies atomic.Int32
	r.model.SetChat(func(_ context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		if strings.Contains(req.Messages[0].Content, "ROLE: verifier") && verifies.Add(1) == 1 {
			cancel() // the process stops during the first verification
			return nil, context.Canceled
		}
		return mock.Answer(req, r.script.Reply(req.Messages[0].Content, req.Messages[1].Content)), nil
	})
	q := "What is the population of the town where my sister Ana lives?"
	if _, err := r.eng.Research(ctx, research.Request{UserKey: user, Question: q}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted research: %v", err)
	}
	tr, err := r.traces.LastTrace(context.Background(), user)
	if err != nil || tr.Status != kairos.ResearchRunning {
		t.Fatalf("trace after the stop: %+v, %v", tr, err)
	}
	before := len(r.model.Requests())
	r.build() // a restart
	res := r.ask(q)
	if res.TraceID != tr.ID || res.Abstained || !strings.Contains(res.Answer, "45,870") {
		t.Fatalf("resumed %s (first %s): %q", res.TraceID, tr.ID, res.Answer)
	}
	for _, req := range r.model.Requests()[before:] {
		if strings.Contains(req.Messages[0].Content, "ROLE: planner") && !strings.Contains(req.Messages[1].Content, "quotes") {
			t.Fatalf("the question was planned again after the restart")
		}
	}
	_, st := r.trace(res.TraceID)
	asked, _ := json.Marshal(st["asked"])
	if strings.Count(string(asked), `memory\u0000`) != 1 {
		t.Fatalf("memory searched again: %s", asked)
	}
	notes, _ := json.Marshal(st["notes"])
	if !strings.Contains(string(notes), "resumed") {
		t.Fatalf("notes %s", notes)
	}
}

// A spending cap reached mid-way stops research with the cap's sentence;
// what was checked before stays in the answer.
func TestSpendingCapStopsResearch(t *testing.T) {
	r := newRig(t)
	r.remember("Dentist appointment on 2026-12-03 at 14:30.", r.now)
	r.model.SetChat(func(_ context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		if strings.Contains(req.Messages[0].Content, "ROLE: verifier") {
			return nil, &kairos.SpendRefusal{Message: "You reached your daily token cap; it resets at midnight."}
		}
		return mock.Answer(req, r.script.Reply(req.Messages[0].Content, req.Messages[1].Content)), nil
	})
	res := r.ask("When is my dentist appointment?")
	if res.Status != kairos.ResearchOverBudget || !strings.Contains(res.Stopped, "daily token cap") {
		t.Fatalf("result %+v", res)
	}
}

// Local models wrap their JSON in prose and code fences, and write tool
// calls in <tool_call> tags: research reads them all the same.
func TestProseWrappedAnswers(t *testing.T) {
	r := newRig(t)
	r.script.Prose = true
	r.file("rivers/kestrel.md", "The Kestrel River is 412 kilometres long.")
	res := r.ask("How long is the Kestrel River?")
	if res.Abstained || !strings.Contains(res.Answer, "412") {
		t.Fatalf("answer %q", res.Answer)
	}
}
