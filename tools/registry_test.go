package tools_test

import (
	"context"
	"slices"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools"
)

type named string

func (n named) Spec() kairos.ToolSpec { return kairos.ToolSpec{Name: string(n)} }
func (n named) Action(context.Context, *kairos.ToolInvocation) (kairos.ToolAction, error) {
	return kairos.ToolAction{}, nil
}
func (n named) Call(context.Context, *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	return nil, nil
}

// schedules.enabled: false removes the schedule tool from the list.
func TestSchedulesDisabledIsAbsent(t *testing.T) {
	r := tools.NewRegistry(named("search"), named("schedule"))
	p := kairos.DefaultPolicy()
	if n := len(r.Tools(p)); n != 2 {
		t.Fatalf("enabled: %d tools", n)
	}
	p.Schedules.Enabled = false
	got := r.Tools(p)
	if len(got) != 1 || got[0].Spec().Name != "search" {
		t.Fatalf("disabled: %v", got)
	}
}

// scopedSource offers one tool per user: skill__<user>.
type scopedSource struct{}

func (scopedSource) Tools(p *kairos.Policy) []kairos.Tool { return nil }
func (scopedSource) ToolsFor(p *kairos.Policy, sc kairos.ToolScope) []kairos.Tool {
	if sc.UserKey == "" {
		return nil
	}
	return []kairos.Tool{named("skill__" + sc.UserKey)}
}

// A scoped source gets the user; features.self_update: false removes
// `skill` and every skill__ tool whichever source offers them.
func TestScopedSourceAndSelfUpdate(t *testing.T) {
	r := tools.NewRegistry(named("search"), named("skill")).WithSource(scopedSource{})
	p := kairos.DefaultPolicy()
	names := func(ts []kairos.Tool) (out []string) {
		for _, tl := range ts {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	if got := names(r.ToolsFor(p, kairos.ToolScope{UserKey: "u1"})); len(got) != 3 || got[2] != "skill__u1" {
		t.Fatalf("scoped: %v", got)
	}
	if got := names(r.Tools(p)); len(got) != 2 {
		t.Fatalf("unscoped: %v", got)
	}
	p.Features.SelfUpdate = false
	if got := names(r.ToolsFor(p, kairos.ToolScope{UserKey: "u1"})); len(got) != 1 || got[0] != "search" {
		t.Fatalf("self_update off: %v", got)
	}
}

type source []kairos.Tool

func (s source) Tools(*kairos.Policy) []kairos.Tool { return s }

// TestFeatureFlagsRemoveTools: seed 004's flags remove their tools, the
// built-in ones and those a source adds (approved skills, skill__*).
func TestFeatureFlagsRemoveTools(t *testing.T) {
	r := tools.NewRegistry(named("search"), named("code"), named("memory"), named("skill")).
		WithSource(source{named("skill__rates"), named("files__read")})
	names := func(p *kairos.Policy) (out []string) {
		for _, tl := range r.Tools(p) {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	cases := []struct {
		name string
		set  func(*kairos.Features)
		want []string
	}{
		{"defaults", func(*kairos.Features) {}, []string{"search", "code", "memory", "skill", "skill__rates", "files__read"}},
		{"cli_exec false", func(f *kairos.Features) { f.CLIExec = false }, []string{"search", "memory", "skill", "skill__rates", "files__read"}},
		{"self_update false", func(f *kairos.Features) { f.SelfUpdate = false }, []string{"search", "code", "memory", "files__read"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := kairos.DefaultPolicy()
			tc.set(&p.Features)
			if got := names(p); !slices.Equal(got, tc.want) {
				t.Fatalf("tools %v, want %v", got, tc.want)
			}
		})
	}
}
