package tools_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools"
)

// described is a tool with a description (skills and MCP tools are
// offered by what they say they do).
type described struct{ name, desc string }

func (d described) Spec() kairos.ToolSpec { return kairos.ToolSpec{Name: d.name, Description: d.desc} }
func (d described) Action(context.Context, *kairos.ToolInvocation) (kairos.ToolAction, error) {
	return kairos.ToolAction{}, nil
}
func (d described) Call(context.Context, *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	return nil, nil
}

// onDemand is a built-in tool offered when its cues are in the message.
type onDemand struct {
	named
	cues []string
}

func (o onDemand) CuedBy(m tools.Message) bool { return tools.HasCue(m.Words, o.cues) }

var (
	topics  = []string{"invoices", "recipes", "plants", "currency", "flights", "groceries", "minutes", "novels"}
	fillers = []string{"hello", "there", "friend", "yes", "ok", "quick", "question", "about", "again", "please"}
	cueSets = map[string][]string{"code": {"calculat", "javascript"}, "schedule": {"remind", "tomorrow"}, "research": {"cite", "evidence"}}
)

// TestOfferedByRelevance: for generated registries (the built-in tools,
// 0 to 40 skills and MCP tools) and messages, ToolsFor offers every
// built-in tool without cues, a cued one exactly when the message cues or
// names it or the turn wants it, all skills and MCP tools when they are
// few and otherwise at most tools.MaxExtraOffered that the message shares
// a word with or names, in the registry's order; and every tool the user
// may call is offered once the turn wants it.
func TestOfferedByRelevance(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	p := kairos.DefaultPolicy()
	p.Features.SelfUpdate, p.Features.CLIExec, p.Research.Enabled, p.Schedules.Enabled = true, true, true, true
	for i := range 300 {
		var extra source
		for j := range r.IntN(41) {
			name := fmt.Sprintf("skill__t%d", j)
			if j%3 == 0 {
				name = fmt.Sprintf("srv__t%d", j)
			}
			extra = append(extra, described{name, "Keeps the user's " + topics[j%len(topics)] + " tidy"})
		}
		reg := tools.NewRegistry(named("search"), named("memory"), onDemand{"code", cueSets["code"]},
			onDemand{"schedule", cueSets["schedule"]}, onDemand{"research", cueSets["research"]}).WithSource(extra)
		words, cued := message(r, extra)
		sc := kairos.ToolScope{UserKey: "u", Query: strings.Join(words, " ")}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkOffer(t, reg, p, sc, cued, len(extra)) })
	}
}

// message draws a message: fillers, maybe cue words (whose tools it
// returns), maybe a topic, maybe a tool's name.
func message(r *rand.Rand, extra source) ([]string, map[string]bool) {
	words := []string{fillers[r.IntN(len(fillers))], fillers[r.IntN(len(fillers))]}
	cued := map[string]bool{}
	for tool, cues := range cueSets {
		if r.IntN(3) == 0 {
			words = append(words, cues[r.IntN(len(cues))]+[]string{"", "e", "ing"}[r.IntN(3)])
			cued[tool] = true
		}
	}
	if r.IntN(2) == 0 {
		words = append(words, topics[r.IntN(len(topics))])
	}
	if len(extra) > 0 && r.IntN(2) == 0 {
		name := extra[r.IntN(len(extra))].Spec().Name
		if r.IntN(2) == 0 {
			_, name, _ = strings.Cut(name, "__")
		}
		words = append(words, name)
	}
	r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	return words, cued
}

func checkOffer(t *testing.T, reg *tools.Registry, p *kairos.Policy, sc kairos.ToolScope, cued map[string]bool, extras int) {
	all := reg.ToolsFor(p, kairos.ToolScope{UserKey: "u", All: true})
	got := reg.ToolsFor(p, sc)
	var gotNames, allNames []string
	for _, tl := range got {
		gotNames = append(gotNames, tl.Spec().Name)
	}
	for _, tl := range all {
		allNames = append(allNames, tl.Spec().Name)
	}
	if !isSubsequence(gotNames, allNames) {
		t.Fatalf("offer %v is not a subsequence of every tool %v", gotNames, allNames)
	}
	for _, name := range []string{"search", "memory", "code", "schedule", "research"} {
		want := cueSets[name] == nil || cued[name] || tools.Named(sc.Query, name)
		if slices.Contains(gotNames, name) != want {
			t.Errorf("%q: %s offered %v, want %v", sc.Query, name, !want, want)
		}
	}
	var offeredExtra []string
	for _, tl := range got {
		if n := tl.Spec().Name; strings.Contains(n, "__") {
			offeredExtra = append(offeredExtra, n)
			if extras > tools.MaxExtraOffered && !tools.Named(sc.Query, n) && !sharesTopic(sc.Query, tl.Spec().Description) {
				t.Errorf("%q: %s offered without relevance", sc.Query, n)
			}
		}
	}
	if extras <= tools.MaxExtraOffered && len(offeredExtra) != extras || len(offeredExtra) > tools.MaxExtraOffered {
		t.Errorf("%q: %d of %d skills and MCP tools offered", sc.Query, len(offeredExtra), extras)
	}
	for _, name := range allNames {
		wanted := sc
		wanted.Wanted = []string{name}
		if !slices.ContainsFunc(reg.ToolsFor(p, wanted), func(tl kairos.Tool) bool { return tl.Spec().Name == name }) {
			t.Errorf("%s is not offered when the turn wants it", name)
		}
		if tools.Named(sc.Query, name) && strings.Contains(name, "__") && !slices.Contains(gotNames, name) {
			t.Errorf("%q names %s, which is not offered: %v", sc.Query, name, gotNames)
		}
	}
}

func sharesTopic(query, desc string) bool {
	for _, tp := range topics {
		if strings.Contains(query, tp) && strings.Contains(desc, tp) {
			return true
		}
	}
	return false
}

func isSubsequence(sub, of []string) bool {
	i := 0
	for _, s := range of {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

// TestTimeMentionCuesSchedule: a clock time or a span cues a tool whose
// CuedBy uses tools.MentionsTime (schedule's does), whatever the words around it, and a number
// that is no time (an id, a count, a year) does not. Generated: every
// time form × every frame.
func TestTimeMentionCuesSchedule(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Schedules.Enabled = true
	timed := timeCued{named("schedule")}
	offers := func(msg string) bool {
		got, _ := tools.Offered([]kairos.Tool{timed}, nil, kairos.ToolScope{Query: msg})
		return len(got) == 1
	}
	times := []string{"5pm", "5 pm", "7am", "17:30", "at 7", "by 9", "in 20", "in 20 min", "2h", "45m", "90 secs",
		"30s", "in 3 days", "3 weeks", "10 minutes", "around 6", "until 11", "after 4", "8.15pm", "at 10:45"}
	frames := []string{"ping me %s", "%s stretch", "nudge me %s about the oven", "yo, %s, the call",
		"mañana %s llamar", "%s!!", "can you do the thing %s please"}
	for _, tm := range times {
		for _, f := range frames {
			if msg := fmt.Sprintf(f, tm); !offers(msg) {
				t.Errorf("%q: schedule not cued by the time %q", msg, tm)
			}
		}
	}
	for _, msg := range []string{"load 10001 m3", "I have 3 cats", "order #4521 shipped", "in 2026 we moved",
		"room 101", "chapter 12 of the book", "what's 17 times 23"} {
		if offers(msg) {
			t.Errorf("%q: schedule cued by a number that is no time", msg)
		}
	}
}

// timeCued is cued by a clock time or a span alone.
type timeCued struct{ named }

func (timeCued) CuedBy(m tools.Message) bool { return tools.MentionsTime(m.Words) }
