package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

func TestSummary(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Features.Network = true
	p.Network.AllowList = []string{"api.github.com", "*.wikipedia.org"}
	p.Clock.Enabled = false
	p.Access.GroupReplies = "all"
	p.Agent.Model = "gpt-x"
	p.Sessions.AutoDivide = "none"
	p.Sessions.BackupSchedule = "@daily"
	s := policy.Summary(p)
	for _, want := range []string{
		"Clock: disabled",
		"groups: answers to every message",
		"Network: GET to api.github.com, *.wikipedia.org; blocked: banking, payments, crypto_exchanges, login_flows",
		"Agent: model gpt-x,",
		"Sessions: new session none; code executions kept P30D; backup @daily",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if policy.Summary(nil) != "no policy" {
		t.Error("Summary(nil)")
	}
}

func TestStatusLine(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		st   policy.ReloadStatus
		want string
	}{
		{policy.ReloadStatus{At: at, OK: true}, "Last reload 2026-03-04 05:06:07Z: OK"},
		{policy.ReloadStatus{At: at, OK: true, Defaults: true}, "No policy file: built-in defaults in force (checked 2026-03-04 05:06:07Z)"},
		{policy.ReloadStatus{At: at, Err: "p.yaml:1:1: x"}, "Last reload 2026-03-04 05:06:07Z FAILED (the last good policy stays in force):\np.yaml:1:1: x"},
	}
	for _, tc := range tests {
		if got := policy.StatusLine(tc.st); got != tc.want {
			t.Errorf("StatusLine(%+v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}
