package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/chzyer/readline"
)

// lineEditor reads the terminal's lines on request, each with its own
// prompt: `> ` for the next message, `Approve? [y/N] ` for an approval.
// Nothing is read, and no prompt shown, while no one asks (a turn runs:
// the prompt comes back after the reply). An ask made while another is
// being edited takes the line over (a scheduled task's approval while
// the user sits at `> `) and hands it back when answered. Ctrl-C on a
// typed line clears it; Ctrl-C on an empty line ends the chat.
// doc/RATIONALE.md says why this sits on chzyer/readline.
type lineEditor struct {
	rl        editorReader
	interrupt func()
	out       io.Writer // notes of the editor's own

	mu      sync.Mutex
	asks    []*editAsk // waiting; the last gets the next line
	reading bool       // rl.Readline runs
	ended   bool
	wake    chan struct{}
}

// editorReader is the line editor proper: a *readline.Instance.
type editorReader interface {
	Readline() (string, error)
	SetPrompt(string)
	Refresh()
	SaveHistory(string) error
}

type editAsk struct {
	prompt  string
	history bool // the answer goes to the history (messages do, approvals not)
	reply   chan editAnswer
}

type editAnswer struct {
	line string
	ok   bool
}

func newLineEditor(rl editorReader, interrupt func(), out io.Writer) *lineEditor {
	return &lineEditor{rl: rl, interrupt: interrupt, out: out, wake: make(chan struct{}, 1)}
}

// isReading reports whether a line is being asked for (rl.Readline runs
// or is about to).
func (e *lineEditor) isReading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reading
}

// ask shows prompt and returns the line typed, or false when the input
// ended or ctx did.
func (e *lineEditor) ask(ctx context.Context, prompt string, history bool) (string, bool) {
	a := &editAsk{prompt: prompt, history: history, reply: make(chan editAnswer, 1)}
	e.mu.Lock()
	if e.ended {
		e.mu.Unlock()
		return "", false
	}
	e.asks = append(e.asks, a)
	takeOver := e.reading
	if takeOver {
		e.rl.SetPrompt(prompt)
	}
	e.mu.Unlock()
	if takeOver {
		e.rl.Refresh()
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
	select {
	case ans := <-a.reply:
		return ans.line, ans.ok
	case <-ctx.Done():
		e.withdraw(a)
		select {
		case ans := <-a.reply: // answered as it was withdrawn
			return ans.line, ans.ok
		default:
			return "", false
		}
	}
}

// withdraw takes back an ask no longer waited for; the line shows the
// prompt of the ask below it, or none.
func (e *lineEditor) withdraw(a *editAsk) {
	e.mu.Lock()
	i := -1
	for j, x := range e.asks {
		if x == a {
			i = j
		}
	}
	if i < 0 {
		e.mu.Unlock()
		return
	}
	top := i == len(e.asks)-1
	e.asks = append(e.asks[:i], e.asks[i+1:]...)
	refresh := top && e.reading
	if refresh {
		e.rl.SetPrompt(e.promptLocked())
	}
	e.mu.Unlock()
	if refresh {
		e.rl.Refresh()
	}
}

func (e *lineEditor) promptLocked() string {
	if len(e.asks) == 0 {
		return ""
	}
	return e.asks[len(e.asks)-1].prompt
}

// run reads lines while asked until the input ends, Ctrl-C on an empty
// line (interrupt) or ctx.
func (e *lineEditor) run(ctx context.Context) {
	defer e.end()
	for {
		if !e.waitAsked(ctx) {
			return
		}
		line, err := e.rl.Readline()
		e.mu.Lock()
		e.reading = false
		e.mu.Unlock()
		switch {
		case errors.Is(err, readline.ErrInterrupt) && line != "":
			continue // Ctrl-C cleared the typed line: ask again
		case errors.Is(err, readline.ErrInterrupt):
			e.interrupt() // Ctrl-C on an empty line ends the chat
			return
		case err != nil:
			return // Ctrl-D, or the terminal went away
		}
		e.deliver(line)
	}
}

// waitAsked waits for an ask and sets its prompt for the next read.
func (e *lineEditor) waitAsked(ctx context.Context) bool {
	for {
		e.mu.Lock()
		if len(e.asks) > 0 {
			e.rl.SetPrompt(e.promptLocked())
			e.reading = true
			e.mu.Unlock()
			return true
		}
		e.mu.Unlock()
		select {
		case <-e.wake:
		case <-ctx.Done():
			return false
		}
	}
}

// deliver hands line to the ask on top; a line typed when no one asks
// any more (an approval that expired) answers nothing, and says so.
func (e *lineEditor) deliver(line string) {
	e.mu.Lock()
	if len(e.asks) == 0 {
		e.mu.Unlock()
		fmt.Fprintln(e.out, "(nothing is waiting for an answer any more; that line was not sent)")
		return
	}
	a := e.asks[len(e.asks)-1]
	e.asks = e.asks[:len(e.asks)-1]
	e.mu.Unlock()
	if a.history && line != "" {
		_ = e.rl.SaveHistory(line)
	}
	a.reply <- editAnswer{line: line, ok: true}
}

// end answers every waiting ask with the end of input.
func (e *lineEditor) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = true
	for _, a := range e.asks {
		a.reply <- editAnswer{}
	}
	e.asks = nil
}

// newTerminalReadline is chzyer/readline on the terminal f (the chat's
// stdin, which may not be the process's: tests use a pseudo-terminal),
// with Home and End as tmux and screen send them, and resizes told
// through width (readline's default keeps one callback in a package
// variable that every editor overwrites: a data race with two chats in
// one process, as in the tests).
func newTerminalReadline(f *os.File, out io.Writer, hist string, width *widthWatch) (*readline.Instance, error) {
	fd := int(f.Fd())
	outFd := fd
	if of, ok := out.(*os.File); ok && readline.IsTerminal(int(of.Fd())) {
		outFd = int(of.Fd())
	}
	var mu sync.Mutex
	var saved *readline.State
	return readline.NewEx(&readline.Config{Prompt: "> ", HistoryFile: hist, HistorySearchFold: true, DisableAutoSaveHistory: true,
		InterruptPrompt: "^C", Stdout: out, Stderr: out,
		Stdin:              readline.NewCancelableStdin(&homeEndKeys{r: f}),
		FuncIsTerminal:     func() bool { return true },
		FuncOnWidthChanged: width.start,
		FuncGetWidth: func() int {
			w, _, err := readline.GetSize(outFd)
			if err != nil || w <= 0 {
				return 80
			}
			return w
		},
		FuncMakeRaw: func() error {
			st, err := readline.MakeRaw(fd)
			mu.Lock()
			saved = st
			mu.Unlock()
			return err
		},
		FuncExitRaw: func() error {
			mu.Lock()
			st := saved
			saved = nil
			mu.Unlock()
			if st == nil {
				return nil
			}
			return readline.Restore(fd, st)
		},
	})
}

// homeEndKeys passes the terminal's input on, with Home and End in the
// forms readline does not know (`\e[1~` and `\e[4~` from tmux and
// screen, `\e[7~` and `\e[8~` from rxvt) turned into Ctrl-A and Ctrl-E,
// which it does. A sequence split across reads is held back until it is
// whole or cannot be one.
type homeEndKeys struct {
	r       io.Reader
	pending []byte
	out     []byte
}

var homeEndMap = []struct{ seq, key []byte }{
	{[]byte("\x1b[1~"), []byte{0x01}}, {[]byte("\x1b[7~"), []byte{0x01}},
	{[]byte("\x1b[4~"), []byte{0x05}}, {[]byte("\x1b[8~"), []byte{0x05}},
}

func (h *homeEndKeys) Read(p []byte) (int, error) {
	for len(h.out) == 0 {
		buf := make([]byte, max(len(p), 64))
		n, err := h.r.Read(buf)
		h.pending = append(h.pending, buf[:n]...)
		h.translate(err != nil)
		if err != nil && len(h.out) == 0 {
			return 0, err
		}
	}
	n := copy(p, h.out)
	h.out = h.out[n:]
	return n, nil
}

// translate moves what is settled from pending to out; at the end of
// input (flush) everything is.
func (h *homeEndKeys) translate(flush bool) {
	b := h.pending
	for len(b) > 0 {
		if b[0] != 0x1b {
			i := bytes.IndexByte(b, 0x1b)
			if i < 0 {
				i = len(b)
			}
			h.out = append(h.out, b[:i]...)
			b = b[i:]
			continue
		}
		matched, partial := false, false
		for _, m := range homeEndMap {
			switch {
			case bytes.HasPrefix(b, m.seq):
				h.out = append(h.out, m.key...)
				b = b[len(m.seq):]
				matched = true
			case bytes.HasPrefix(m.seq, b):
				partial = true
			}
			if matched {
				break
			}
		}
		if matched {
			continue
		}
		if partial && !flush {
			break // wait for the rest of the sequence
		}
		h.out = append(h.out, b[0])
		b = b[1:]
	}
	h.pending = append(h.pending[:0], b...)
}

// widthWatch tells one line editor of the terminal's resizes (SIGWINCH)
// until stopped.
type widthWatch struct {
	sig  chan os.Signal
	done chan struct{}
	once sync.Once
}

func newWidthWatch() *widthWatch {
	return &widthWatch{sig: make(chan os.Signal, 1), done: make(chan struct{})}
}

// start calls resized at each resize; readline calls it once, with its
// redraw for the new width.
func (w *widthWatch) start(resized func()) {
	signal.Notify(w.sig, syscall.SIGWINCH)
	go func() {
		for {
			select {
			case <-w.sig:
				resized()
			case <-w.done:
				return
			}
		}
	}()
}

func (w *widthWatch) stop() {
	w.once.Do(func() {
		signal.Stop(w.sig)
		close(w.done)
	})
}
