package main

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakePromptTerm records writes and redraws; reading is flipped by the
// test, as readline's key loop flips it.
type fakePromptTerm struct {
	mu      sync.Mutex
	out     bytes.Buffer
	reading atomic.Bool
	redrawn chan struct{}
	redraws atomic.Int32
}

func (f *fakePromptTerm) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.Write(b)
}
func (f *fakePromptTerm) Stdout() io.Writer { return f }
func (f *fakePromptTerm) Reading() bool     { return f.reading.Load() }
func (f *fakePromptTerm) Refresh() {
	f.redraws.Add(1)
	f.Write([]byte("> "))
	select {
	case f.redrawn <- struct{}{}:
	default:
	}
}
func (f *fakePromptTerm) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.String()
}

// TestNoteBetweenPromptAndReadingRedrawsThePrompt: a line written while a
// line is asked for but readline is not reading keys this instant (its
// prompt drawn, its key loop not yet started) clears the stale prompt,
// and the prompt is drawn again once readline reads; written while
// readline reads, or when no line is asked for, it goes straight to
// readline's writer (which redraws by itself) with no redraw of ours.
// Before, such a line came after "> " and no prompt followed
// (TestChatTerminalModelUnreachable on a busy machine).
func TestNoteBetweenPromptAndReadingRedrawsThePrompt(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name             string
		editing, reading bool
		want             string
		redraw           bool
	}{
		{"in the instant before readline reads", true, false, "> \r\x1b[KNote\n> ", true},
		{"while readline reads", true, true, "> Note\n", false},
		{"no line asked for", false, false, "> Note\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakePromptTerm{redrawn: make(chan struct{}, 1)}
			f.reading.Store(c.reading)
			var editing atomic.Bool
			editing.Store(c.editing)
			o := &promptSafeOut{term: f, editing: editing.Load, poll: time.Millisecond}
			f.Write([]byte("> ")) // readline drew its prompt
			if _, err := o.Write([]byte("Note\n")); err != nil {
				t.Fatal(err)
			}
			if c.redraw {
				f.reading.Store(true) // readline's key loop starts
				select {
				case <-f.redrawn:
				case <-testCtx(t).Done():
					t.Fatalf("the prompt was never drawn again: %q", f.text())
				}
			}
			if got := f.text(); got != c.want || (f.redraws.Load() > 0) != c.redraw {
				t.Fatalf("screen %q, %d redraws; want %q, redraw %v", got, f.redraws.Load(), c.want, c.redraw)
			}
		})
	}
}

// slowReadingTerm is a terminal whose key loop starts only after many
// looks (a machine so busy that readline's loop waits seconds to run).
type slowReadingTerm struct {
	*fakePromptTerm
	looks, after atomic.Int64
}

func (s *slowReadingTerm) Reading() bool { return s.looks.Add(1) > s.after.Load() }

// TestRedrawWaitsForAKeyLoopHoweverLate: the prompt comes back however
// long readline's key loop takes to start (the redraw gave up after 600
// looks, about three seconds, and the chat was left with no prompt), and
// the redraw stops looking once no line is asked for.
func TestRedrawWaitsForAKeyLoopHoweverLate(t *testing.T) {
	parallel(t)
	for _, late := range []int64{1, 599, 601, 5000} {
		s := &slowReadingTerm{fakePromptTerm: &fakePromptTerm{redrawn: make(chan struct{}, 1)}}
		s.after.Store(late + 1) // the Write's own look, then late looks by the redraw
		var editing atomic.Bool
		editing.Store(true)
		o := &promptSafeOut{term: s, editing: editing.Load, poll: time.Microsecond}
		if _, err := o.Write([]byte("Note\n")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.redrawn:
		case <-testCtx(t).Done():
			t.Fatalf("key loop after %d looks: the prompt was never drawn again (%d looks)", late, s.looks.Load())
		}
	}
	s := &slowReadingTerm{fakePromptTerm: &fakePromptTerm{redrawn: make(chan struct{}, 1)}}
	s.after.Store(1 << 62) // never reads
	var editing atomic.Bool
	editing.Store(true)
	o := &promptSafeOut{term: s, editing: editing.Load, poll: time.Microsecond}
	o.Write([]byte("Note\n"))
	editing.Store(false) // the input ended: nothing is asked for
	for o.waiting.Load() {
		time.Sleep(time.Millisecond)
	}
	if s.redraws.Load() != 0 {
		t.Fatalf("a prompt was drawn with no line asked for")
	}
}
