package testkit

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTB is a testing.TB whose deadline the test chooses and whose Fatalf
// is recorded (and ends the calling goroutine, as the real one does).
type fakeTB struct {
	testing.TB
	d     time.Time
	has   bool
	mu    sync.Mutex
	fatal string
}

func (f *fakeTB) Deadline() (time.Time, bool) { return f.d, f.has }

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) fatalMessage() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fatal
}

// noDeadlineTB is a testing.TB without a Deadline method, like *testing.B.
type noDeadlineTB struct{ testing.TB }

func TestBeforeDeadline(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		left time.Duration
		want time.Duration // before the deadline
	}{
		{"go test's default 10 minutes", 10 * time.Minute, deadlineMargin},
		{"CI's 30 minutes", 30 * time.Minute, deadlineMargin},
		{"a short -timeout keeps nine tenths", 30 * time.Second, 3 * time.Second},
		{"one second left", time.Second, 100 * time.Millisecond},
		{"already past", -time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := now.Add(tc.left)
			if got := d.Sub(beforeDeadline(d, now)); got != tc.want {
				t.Fatalf("margin = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDeadlineFollowsTheTestsOwn(t *testing.T) {
	d := time.Now().Add(20 * time.Minute)
	got, ok := Deadline(&fakeTB{TB: t, d: d, has: true}).Deadline()
	if !ok || !got.Equal(d.Add(-deadlineMargin)) {
		t.Fatalf("deadline = %v (%v), want %v", got, ok, d.Add(-deadlineMargin))
	}
	if td, ok := t.Deadline(); ok {
		got, _ := Deadline(t).Deadline()
		if !got.Before(td) || td.Sub(got) > deadlineMargin {
			t.Fatalf("deadline = %v, want shortly before the test's %v", got, td)
		}
	}
}

// TestGiveUpAtIsDeadlines: a clock-checking wait gives up when Deadline's
// context ends, with or without a deadline of the test's own.
func TestGiveUpAtIsDeadlines(t *testing.T) {
	d := time.Now().Add(20 * time.Minute)
	if got := GiveUpAt(&fakeTB{TB: t, d: d, has: true}); !got.Equal(d.Add(-deadlineMargin)) {
		t.Fatalf("give up at %v, want %v", got, d.Add(-deadlineMargin))
	}
	before := time.Now()
	if got := GiveUpAt(&fakeTB{TB: t}); got.Before(before.Add(noDeadline)) || got.After(time.Now().Add(noDeadline)) {
		t.Fatalf("without a deadline: give up at %v, want %v from now", got, noDeadline)
	}
}

func TestDeadlineWithoutOne(t *testing.T) {
	for name, tb := range map[string]testing.TB{
		"no deadline set":    &fakeTB{TB: t},
		"no Deadline method": noDeadlineTB{t},
	} {
		before := time.Now()
		got, ok := Deadline(tb).Deadline()
		if !ok || got.Before(before.Add(noDeadline)) || got.After(time.Now().Add(noDeadline)) {
			t.Fatalf("%s: deadline = %v (%v), want %v from now", name, got, ok, noDeadline)
		}
	}
}

func TestDeadlineEndsWithTheTest(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) { ctx = Deadline(t) })
	if ctx.Err() != context.Canceled {
		t.Fatalf("after the test: ctx.Err() = %v, want context.Canceled", ctx.Err())
	}
}

func TestWaitForReturnsOnTheEvent(t *testing.T) {
	var ready atomic.Bool
	go func() {
		time.Sleep(30 * time.Millisecond)
		ready.Store(true)
	}()
	calls := 0
	WaitFor(t, "the flag to be set", func() bool { calls++; return ready.Load() })
	if !ready.Load() || calls < 2 {
		t.Fatalf("WaitFor returned with ready=%v after %d checks", ready.Load(), calls)
	}
}

func TestWaitForFailsAtTheDeadline(t *testing.T) {
	f := &fakeTB{TB: t, d: time.Now().Add(200 * time.Millisecond), has: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		WaitFor(f, "the impossible to happen", func() bool { return false })
	}()
	select {
	case <-done:
	case <-Deadline(t).Done():
		t.Fatal("WaitFor did not give up at its deadline")
	}
	if msg := f.fatalMessage(); !strings.Contains(msg, "waiting for the impossible to happen") {
		t.Fatalf("failure = %q, want it to say what never happened", msg)
	}
}

func TestPoll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Poll(ctx, func() bool { return false }); err != context.Canceled {
		t.Fatalf("Poll after the context ended = %v, want context.Canceled", err)
	}
	if err := Poll(ctx, func() bool { return true }); err != nil {
		t.Fatalf("Poll of a true condition = %v, want nil", err)
	}
}
