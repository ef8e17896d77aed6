package schedule_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// countingTool is newTool whose expansion calls are counted.
func countingTool(t testing.TB, zone string, expansions *int, pol *kairos.Policy) *schedtool.Tool {
	cfg := testConfig(t, zone)
	if pol == nil {
		pol = kairos.DefaultPolicy()
	}
	cfg.Policy = func() *kairos.Policy { return pol }
	occurrences, inspect := cfg.Occurrences, cfg.Inspect
	cfg.Occurrences = func(ctx context.Context, rule string, start time.Time, loc *time.Location, after time.Time, n int) ([]time.Time, error) {
		*expansions++
		return occurrences(ctx, rule, start, loc, after, n)
	}
	cfg.Inspect = func(ctx context.Context, rule string, start time.Time) (schedtool.Shape, error) {
		*expansions++
		return inspect(ctx, rule, start)
	}
	return schedtool.New(cfg)
}

// The minimum interval holds over the whole cycle of a rule, not its
// first gap, and reminders have a floor of their own.
func TestCreateMinIntervalOverWholeRule(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, args, errSub string }{
		// 09:30, then 12:00 (2.5 h), then 12:30 (30 min).
		{"task whose later gaps are short", `{"action":"create","when":"2026-11-25T09:30:00Z","repeat":"FREQ=DAILY;BYHOUR=9,12;BYMINUTE=0,30","task":"check"}`, "schedules.min_interval"},
		// 09:00:00 then 09:00:01: a secondly burst each hour.
		{"reminder burst", `{"action":"create","when":"2026-11-25T09:00:00Z","repeat":"FREQ=HOURLY;BYMINUTE=0;BYSECOND=0,1,2","text":"ping"}`, "schedules.reminder_min_interval"},
		{"secondly reminder three hours old", `{"action":"create","when":"2026-11-24T15:00:00Z","repeat":"FREQ=SECONDLY","text":"ping"}`, "schedules.reminder_min_interval"},
		{"cell with its own floor", `{"action":"create","when":"2026-11-25T09:00:00Z","repeat":"FREQ=MINUTELY;INTERVAL=30","text":"x","code":"output({notify:'x'})"}`, "schedules.min_interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			tool := countingTool(t, "UTC", &n, nil)
			_, err := tool.Call(ctx, inv(tc.args, false))
			if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.errSub) {
				t.Fatalf("got %v, want EINVALID naming %s", err, tc.errSub)
			}
		})
	}
	n := 0
	tool := countingTool(t, "UTC", &n, nil)
	if _, err := tool.Call(ctx, inv(`{"action":"create","when":"2026-11-25T09:00:00Z","repeat":"FREQ=HOURLY;BYMINUTE=0,30","text":"stretch"}`, false)); err != nil {
		t.Fatalf("a half-hourly reminder is above the reminder floor: %v", err)
	}
}

// A rule from an untrusted turn is not expanded before the approval:
// Action parses it only; Call (after Approve) expands it.
func TestTaintedRuleExpandedAfterApproval(t *testing.T) {
	ctx := context.Background()
	n := 0
	tool := countingTool(t, "UTC", &n, nil)
	in := inv(`{"action":"create","when":"2026-11-24T15:00:00Z","repeat":"FREQ=HOURLY","text":"x"}`, true)
	act, err := tool.Action(ctx, in)
	if err != nil || !act.Impactful || n != 0 {
		t.Fatalf("action %+v %v after %d expansions", act, err, n)
	}
	if !strings.Contains(act.Reason, "after approval") || !strings.Contains(act.Reason, "Tue 24 Nov 15:00 UTC") {
		t.Fatalf("reason %q", act.Reason)
	}
	if _, err := tool.Call(ctx, in); err != nil || n == 0 {
		t.Fatalf("call: %v after %d expansions", err, n)
	}
	n = 0
	if _, err := tool.Action(ctx, inv(`{"action":"create","when":"2026-11-24T15:00:00Z","repeat":"FREQ=HOURLY","text":"x"}`, false)); err != nil || n == 0 {
		t.Fatalf("a trusted turn's approval shows the first occurrence: %v %d", err, n)
	}
}

// BenchmarkCreate is one create call (Action then Call) of the costliest
// rules a model can ask for: a secondly rule that started three hours
// back, the densest cycle accepted, a COUNT at its maximum, and a rule
// with no occurrence.
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct{ name, args string }{
		{"secondly-3h-old", `{"action":"create","when":"2026-11-24T15:00:00Z","repeat":"FREQ=SECONDLY","text":"x"}`},
		{"densest-cycle", `{"action":"create","when":"2026-11-25T00:00:00Z","repeat":"FREQ=MINUTELY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23","text":"x"}`},
		{"count-max", `{"action":"create","when":"2026-11-25T09:00:00Z","repeat":"FREQ=DAILY;COUNT=1000","text":"x"}`},
		{"no-occurrence", `{"action":"create","when":"2026-11-25T09:00:00Z","repeat":"FREQ=MONTHLY;BYSETPOS=9;BYDAY=MO","text":"x"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			pol := kairos.DefaultPolicy()
			pol.Schedules.MaxPerUser = 0
			pol.Schedules.ReminderMinInterval = kairos.Duration{}
			tool := countingTool(b, "Europe/Lisbon", &n, pol)
			for b.Loop() {
				in := inv(tc.args, false)
				tool.Action(ctx, in)
				tool.Call(ctx, in)
			}
		})
	}
}
