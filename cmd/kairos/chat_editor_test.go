package main

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/chzyer/readline"
)

// playedEditor plays a line editor's answers, one per Readline, and
// records the prompt each read showed.
type playedEditor struct {
	mu      sync.Mutex
	prompt  string
	prompts []string
	keys    chan editAnswerErr
	saved   []string
}

type editAnswerErr struct {
	line string
	err  error
}

func (p *playedEditor) Readline() (string, error) {
	p.mu.Lock()
	p.prompts = append(p.prompts, p.prompt)
	p.mu.Unlock()
	k, ok := <-p.keys
	if !ok {
		return "", io.EOF
	}
	return k.line, k.err
}
func (p *playedEditor) SetPrompt(s string)         { p.mu.Lock(); p.prompt = s; p.mu.Unlock() }
func (p *playedEditor) Refresh()                   {}
func (p *playedEditor) SaveHistory(l string) error { p.saved = append(p.saved, l); return nil }

// TestLineEditorKeys: Ctrl-C on a typed line clears it and asks again
// (it ended the chat with exit 0); Ctrl-C on an empty line ends the chat;
// Ctrl-D ends the input; an approval asked while a message is edited
// takes the line and hands the prompt back.
func TestLineEditorKeys(t *testing.T) {
	parallel(t)
	p := &playedEditor{keys: make(chan editAnswerErr)}
	var interrupted sync.WaitGroup
	interrupted.Add(1)
	ed := newLineEditor(p, interrupted.Done, io.Discard)
	go ed.run(context.Background())
	ctx := context.Background()
	got := make(chan string, 4)
	go func() {
		l, _ := ed.ask(ctx, "> ", true)
		got <- l
	}()
	p.keys <- editAnswerErr{"half a thought", readline.ErrInterrupt} // Ctrl-C on a typed line
	p.keys <- editAnswerErr{"hello", nil}
	if l := <-got; l != "hello" {
		t.Fatalf("line %q after Ctrl-C cleared the first", l)
	}
	// An approval while "> " is edited: the next line is its answer.
	go func() { l, _ := ed.ask(ctx, "> ", true); got <- "msg:" + l }()
	waitFor(t, "the message prompt", func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.prompts) == 3 })
	go func() { l, _ := ed.ask(ctx, "Approve? [y/N] ", false); got <- "approve:" + l }()
	waitFor(t, "the approval takes the prompt", func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.prompt == "Approve? [y/N] " })
	p.keys <- editAnswerErr{"y", nil}
	if l := <-got; l != "approve:y" {
		t.Fatalf("the approval got %q", l)
	}
	p.keys <- editAnswerErr{"next", nil}
	if l := <-got; l != "msg:next" {
		t.Fatalf("the message got %q", l)
	}
	if strings.Join(p.prompts, "|") != "> |> |> |> " || strings.Join(p.saved, "|") != "hello|next" {
		t.Fatalf("prompts %q, history %q", p.prompts, p.saved)
	}
	go func() { _, ok := ed.ask(ctx, "> ", true); got <- map[bool]string{true: "line", false: "ended"}[ok] }()
	p.keys <- editAnswerErr{"", readline.ErrInterrupt} // Ctrl-C on an empty line
	interrupted.Wait()
	if l := <-got; l != "ended" {
		t.Fatalf("after Ctrl-C on an empty line: %q", l)
	}
}

// TestWidthWatchTellsItsOwnEditor: each line editor hears the terminal's
// resizes through its own watch (readline's default kept one callback in
// a package variable, which a second editor overwrote: a data race), and
// a stopped watch hears nothing.
func TestWidthWatchTellsItsOwnEditor(t *testing.T) {
	parallel(t)
	heard := [2]chan struct{}{make(chan struct{}, 8), make(chan struct{}, 8)}
	watches := [2]*widthWatch{newWidthWatch(), newWidthWatch()}
	for i, w := range watches {
		w.start(func() { heard[i] <- struct{}{} })
	}
	defer watches[1].stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	for i := range heard {
		select {
		case <-heard[i]:
		case <-testCtx(t).Done():
			t.Fatalf("editor %d never heard the resize", i)
		}
	}
	watches[0].stop()
	watches[0].stop() // twice is harmless
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard[1]:
	case <-testCtx(t).Done():
		t.Fatal("the running watch never heard the second resize")
	}
	select {
	case <-heard[0]:
		t.Fatal("a stopped watch heard a resize")
	default:
	}
}
