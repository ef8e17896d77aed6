package tools_test

import (
	"context"
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
