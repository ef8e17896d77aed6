package testkit

import (
	"context"
	"testing"
	"time"
)

// noDeadline is how long Deadline's context lasts when the test has no
// deadline of its own (go test -timeout 0, or a benchmark).
const noDeadline = 10 * time.Minute

// deadlineMargin is how long before the test binary's -timeout Deadline's
// context ends, at most: time for the failing test to report what it was
// waiting for and run its cleanups before go test panics.
const deadlineMargin = 10 * time.Second

// pollEvery is how often WaitFor checks its condition.
const pollEvery = 10 * time.Millisecond

// Deadline returns a context that ends shortly before t's own deadline
// (go test -timeout), or noDeadline from now when t has none, and is
// cancelled when t ends. It is the only failure deadline a test's waits
// need: a wait returns as soon as its event happens, so a busy machine
// costs time but no false failure, and only a stuck test reaches it.
func Deadline(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadlineOf(t, time.Now()))
	t.Cleanup(cancel)
	return ctx
}

// GiveUpAt is when a polling wait of t gives up: when t's Deadline
// context ends, for a loop that checks the clock rather than a context.
func GiveUpAt(t testing.TB) time.Time { return deadlineOf(t, time.Now()) }

// deadlineOf is when Deadline's context for t ends, seen at now.
func deadlineOf(t testing.TB, now time.Time) time.Time {
	td, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return now.Add(noDeadline)
	}
	d, ok := td.Deadline()
	if !ok {
		return now.Add(noDeadline)
	}
	return beforeDeadline(d, now)
}

// beforeDeadline leaves a margin before d of a tenth of the time left,
// and at most deadlineMargin, so a short -timeout still leaves time to
// wait.
func beforeDeadline(d, now time.Time) time.Time {
	margin := min(d.Sub(now)/10, deadlineMargin)
	return d.Add(-max(margin, 0))
}

// WaitFor polls cond every pollEvery until it is true, and fails t with
// "... waiting for <what>" when t's Deadline ends first. It is for conditions no
// channel announces (a log line, a row, a goroutine count); when the fake
// signals the change, wait on that instead (FakeTelegram.WaitUntil).
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if err := Poll(Deadline(t), cond); err != nil {
		t.Fatalf("testkit: gave up at the test's deadline waiting for %s", what)
	}
}

// Poll calls cond every pollEvery until it is true (nil) or ctx ends
// (ctx's error). It is WaitFor for a goroutine that must not call
// t.Fatalf, or for a test that reports the failure itself.
func Poll(ctx context.Context, cond func() bool) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			if cond() {
				return nil
			}
			return ctx.Err()
		}
	}
	return nil
}
