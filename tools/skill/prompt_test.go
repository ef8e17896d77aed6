package skill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/skill"
)

// tokens is the agent's estimate (agent.EstimateTokens).
func tokens(s string) int {
	n := utf8.RuneCountInString(s)
	ascii := 0
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			ascii++
		}
	}
	return (ascii+3)/4 + (n - ascii)
}

var topics = []string{"weather", "currency", "timezone", "recipe", "calories", "mortgage", "distance", "password", "unit", "tip",
	"bmi", "invoice", "translation", "stock", "crypto", "flight", "train", "moon", "sunrise", "tide",
	"calendar", "birthday", "vat", "salary", "loan", "grade", "score", "dice", "coin", "color",
	"hex", "base64", "uuid", "hash", "regex", "json", "csv", "markdown", "slug", "roman",
	"prime", "fibonacci", "factorial", "matrix", "vector", "angle", "speed", "fuel", "paint", "tiles"}

// Many skills, small prompt: 50 skills add under PromptTokens to the
// prompt; the one the message is about is among them; every skill stays
// callable.
func TestManySkillsSmallPrompt(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	for i, topic := range topics {
		v := &kairos.SkillVersion{Description: fmt.Sprintf("Computes the %s figure for the given value and options", topic),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"},"options":{"type":"object"}},"required":["value"]}`),
			Code:        "function run(i){return i.value}", Tests: []kairos.SkillTest{{Input: json.RawMessage(`{}`), Expect: json.RawMessage(`null`)}}}
		if err := r.st.CreateSkill(ctx, &kairos.Skill{Name: topic + "_calc", Owner: owner}, v); err != nil {
			t.Fatal(err, i)
		}
	}
	r.s.Changed()
	offered := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, Query: "what is the sunrise time in Lisbon tomorrow?"})
	var specs []kairos.ToolSpec
	for _, tl := range offered {
		specs = append(specs, tl.Spec())
	}
	raw, _ := json.Marshal(specs)
	n := tokens(string(raw))
	t.Logf("50 skills: %d offered, %d tokens", len(offered), n)
	if n >= 400 || len(offered) == 0 || len(offered) > r.pol.Skills.MaxOffered {
		t.Fatalf("%d offered, %d tokens", len(offered), n)
	}
	if offered[0].Spec().Name != "skill__sunrise_calc" {
		t.Fatalf("most relevant %s", offered[0].Spec().Name)
	}
	if all := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true}); len(all) != 50 {
		t.Fatalf("callable %d", len(all))
	}
	// list finds them all.
	_, out := r.do(t, inv(map[string]any{"action": "list"}))
	if got := strings.Count(mustJSON(out), `"name"`); got != 50 {
		t.Fatalf("list %d", got)
	}
}

// BenchmarkBareCell is a cell running a skill's code directly (the
// reference); BenchmarkSkillCall is the same code through skill__<name>
// (store read, input check, run record, trace). The difference is the
// cost of a skill call beyond its cell's own run.
func BenchmarkBareCell(b *testing.B) {
	ctx := context.Background()
	task := &kairos.CellTask{Code: doubleCode + "\n;{ const r = await run({n: 21}); output(r); }", Verb: kairos.VerbBuild,
		Budget: kairos.DefaultBudget()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, err := cells.Run(ctx, task); err != nil || !res.Success {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkSkillCall(b *testing.B) {
	r := newRig(b, nil)
	ctx := context.Background()
	v := &kairos.SkillVersion{Description: "Doubles", InputSchema: json.RawMessage(`{"type":"object"}`), Code: doubleCode,
		Tests: []kairos.SkillTest{{Input: json.RawMessage(`{}`), Expect: json.RawMessage(`null`)}}}
	if err := r.st.CreateSkill(ctx, &kairos.Skill{Name: "double", Owner: owner}, v); err != nil {
		b.Fatal(err)
	}
	in := &kairos.ToolInvocation{CallID: "c", Name: "skill__double", Arguments: json.RawMessage(`{"n":21}`), UserKey: owner}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tool := r.s.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, All: true})[0]
		if _, err := tool.Action(ctx, in); err != nil {
			b.Fatal(err)
		}
		res, err := tool.Call(ctx, in)
		if err != nil || !strings.Contains(string(res.Content), `"success":true`) {
			b.Fatal(err, res)
		}
	}
}

// instantRunner answers every cell at once: what a skill call costs on
// top of it is the call's own overhead.
type instantRunner struct{}

func (instantRunner) Run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	return &kairos.CellResult{Success: true, Output: json.RawMessage(`{"doubled":42}`), Duration: time.Millisecond}, nil
}

// BenchmarkSkillCallOverhead is one skill__ call (offered-list lookup,
// Action, Call: store read, input check, run record, trace) around a cell
// that costs nothing: the cost of a skill call beyond its cell's own run.
func BenchmarkSkillCallOverhead(b *testing.B) {
	db := storetest.MustOpenDB(b)
	st := store.NewSkillStore(db)
	s := skill.New(skill.Config{Store: st, Runner: instantRunner{}, Executions: store.NewCodeStore(db)})
	ctx := context.Background()
	v := &kairos.SkillVersion{Description: "Doubles", InputSchema: json.RawMessage(`{"type":"object"}`), Code: doubleCode,
		Tests: []kairos.SkillTest{{Input: json.RawMessage(`{}`), Expect: json.RawMessage(`null`)}}}
	if err := st.CreateSkill(ctx, &kairos.Skill{Name: "double", Owner: owner}, v); err != nil {
		b.Fatal(err)
	}
	p := kairos.DefaultPolicy()
	in := &kairos.ToolInvocation{CallID: "c", Name: "skill__double", Arguments: json.RawMessage(`{"n":21}`), UserKey: owner}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tool := s.ToolsFor(p, kairos.ToolScope{UserKey: owner, All: true})[0]
		if _, err := tool.Action(ctx, in); err != nil {
			b.Fatal(err)
		}
		res, err := tool.Call(ctx, in)
		if err != nil || !strings.Contains(string(res.Content), `"success":true`) {
			b.Fatal(err, res)
		}
	}
}

// TestTheSkillAMessageIsAboutReachesTheOffer: with 50 skills, the one a
// message is about is offered by the whole registry (the skills' own pick,
// then tools.Offered over skills and MCP tools), for every topic,
// three-letter ones ("vat", "tip", "bmi") included. The skills ranked by
// one scorer and the registry by another that skipped words under four
// letters, so "vat" won the skills' pick and was then dropped.
func TestTheSkillAMessageIsAboutReachesTheOffer(t *testing.T) {
	r := newRig(t, func(p *kairos.Policy) { p.Features.SelfUpdate = true })
	ctx := context.Background()
	for _, topic := range topics {
		v := &kairos.SkillVersion{Description: fmt.Sprintf("Computes the %s figure for the given value and options", topic),
			InputSchema: json.RawMessage(`{"type":"object"}`), Code: "function run(i){return i.value}",
			Tests: []kairos.SkillTest{{Input: json.RawMessage(`{}`), Expect: json.RawMessage(`null`)}}}
		if err := r.st.CreateSkill(ctx, &kairos.Skill{Name: topic + "_calc", Owner: owner}, v); err != nil {
			t.Fatal(err)
		}
	}
	r.s.Changed()
	reg := tools.NewRegistry().WithSource(r.s).WithSource(mcpTools{"files__read_file", "files__list_directory"})
	for _, topic := range topics {
		for _, frame := range []string{"what's the %s for 120?", "%s please", "need the %s figure now"} {
			msg := fmt.Sprintf(frame, topic)
			var names []string
			for _, tl := range reg.ToolsFor(r.pol, kairos.ToolScope{UserKey: owner, Query: msg}) {
				names = append(names, tl.Spec().Name)
			}
			if !slices.Contains(names, "skill__"+topic+"_calc") {
				t.Errorf("%q: skill__%s_calc not offered: %v", msg, topic, names)
			}
		}
	}
}

// mcpTools is a source of MCP-like tools that say nothing of the topics.
type mcpTools []string

func (m mcpTools) Tools(*kairos.Policy) []kairos.Tool {
	var out []kairos.Tool
	for _, n := range m {
		out = append(out, mcpTool(n))
	}
	return out
}

type mcpTool string

func (m mcpTool) Spec() kairos.ToolSpec {
	return kairos.ToolSpec{Name: string(m), Description: "Reads the operator's shared folder", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (m mcpTool) Action(context.Context, *kairos.ToolInvocation) (kairos.ToolAction, error) {
	return kairos.ToolAction{Name: string(m)}, nil
}
func (m mcpTool) Call(context.Context, *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	return &kairos.ToolResult{Content: json.RawMessage(`{}`)}, nil
}
