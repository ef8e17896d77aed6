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
			o := promptSafeOut{term: f, editing: editing.Load, poll: time.Millisecond, waiting: new(atomic.Bool)}
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
