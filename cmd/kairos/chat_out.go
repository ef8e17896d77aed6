package main

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/chzyer/readline"
)

// promptTerminal is what promptSafeOut needs of the line editor's
// readline: its writer, a redraw of the prompt and typed line, and
// whether it is reading keys this instant.
type promptTerminal interface {
	Stdout() io.Writer
	Refresh()
	Reading() bool
}

// readlineTerminal adapts a *readline.Instance.
type readlineTerminal struct{ *readline.Instance }

func (r readlineTerminal) Reading() bool { return r.Terminal.IsReading() }

// promptSafeOut is what the chat writes through at a terminal. readline's
// own writer clears the prompt, writes and draws the prompt again, but
// only while it reads keys: in the instant between drawing its prompt and
// reading (and between two keys) it writes straight through, which left a
// note that came then after a stale "> " with no prompt below it (a busy
// machine hit that instant). Then the line is cleared first and the
// prompt drawn again as soon as readline reads.
type promptSafeOut struct {
	term    promptTerminal
	editing func() bool // a line is being asked for (lineEditor.reading)
	poll    time.Duration
	waiting atomic.Bool // a redraw is waiting for readline to read: one at a time
}

func (o *promptSafeOut) Write(b []byte) (int, error) {
	w := o.term.Stdout()
	if o.term.Reading() || !o.editing() {
		return w.Write(b)
	}
	if _, err := io.WriteString(w, "\r\x1b[K"); err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	if o.waiting.CompareAndSwap(false, true) {
		go o.redraw()
	}
	return n, err
}

// redraw draws the prompt again once readline reads keys, or gives up
// when no line is asked for any more (the line was read, or the input
// ended). It does not give up on a clock: on a busy machine readline's
// key loop started more than three seconds after its prompt was drawn,
// and a redraw that had stopped looking by then left the chat with no
// prompt (TestChatTerminalModelUnreachable in CI). readline says nothing
// when it starts reading, so this looks.
func (o *promptSafeOut) redraw() {
	defer o.waiting.Store(false)
	for o.editing() {
		if o.term.Reading() {
			o.term.Refresh()
			return
		}
		time.Sleep(o.poll)
	}
}
