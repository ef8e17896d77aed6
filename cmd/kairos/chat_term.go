package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"
	"github.com/kairos-agent/kairos"
)

// chatInput is the terminal's input. On a terminal it is a line editor
// (chat_editor.go): line editing, history in KAIROS_DATA_DIR/chat_history
// (0600), a prompt only when a line is asked for. Otherwise (a pipe,
// tests) it is plain lines of any length on a channel, which the
// approval question reads too.
type chatInput struct {
	lines chan string // a pipe's lines (nil at a terminal)
	ed    *lineEditor // a terminal's editor (nil on a pipe)
	rl    *readline.Instance
	width *widthWatch // the editor's resizes (nil on a pipe)
	w     io.Writer
}

func (c *chatInput) Stdout() io.Writer { return c.w }

// next returns the next message line, or false at the end of input.
func (c *chatInput) next(ctx context.Context) (string, bool) {
	if c.ed != nil {
		return c.ed.ask(ctx, "> ", true)
	}
	select {
	case <-ctx.Done():
		return "", false
	case l, ok := <-c.lines:
		return l, ok
	}
}

// ask returns a line answering prompt; prompted says whether it showed
// the prompt itself (a pipe shows none: the caller prints it).
func (c *chatInput) ask(ctx context.Context, prompt string) (line string, ok bool) {
	if c.ed != nil {
		return c.ed.ask(ctx, prompt, false)
	}
	return c.next(ctx)
}

func (c *chatInput) Close() {
	if c.rl != nil {
		c.rl.Close()
		c.width.stop()
	}
}

// openLines starts reading the input; interrupt is called on Ctrl-C on an
// empty line at a terminal (where Ctrl-C is a key, not SIGINT, while a
// line is edited).
func (m *Main) openLines(ctx context.Context, interrupt func()) (*chatInput, error) {
	in := &chatInput{w: m.Stdout}
	if f, ok := m.Stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		hist := ""
		if err := os.MkdirAll(m.Config.DataDir, 0o700); err == nil {
			hist = filepath.Join(m.Config.DataDir, "chat_history")
			if hf, err := os.OpenFile(hist, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				hf.Close()
			}
		}
		in.width = newWidthWatch()
		rl, err := newTerminalReadline(f, m.Stdout, hist, in.width)
		if err != nil {
			in.width.stop()
			return nil, fmt.Errorf("terminal: %w", err)
		}
		in.rl = rl
		ed := newLineEditor(rl, interrupt, nil)
		in.w = &promptSafeOut{term: readlineTerminal{rl}, editing: ed.isReading, poll: 5 * time.Millisecond}
		ed.out, in.ed = in.w, ed
		go in.ed.run(ctx)
		return in, nil
	}
	in.lines = make(chan string)
	go func() {
		defer close(in.lines)
		r := bufio.NewReader(m.Stdin)
		for {
			l, err := r.ReadString('\n') // no length limit: a long paste is never cut
			if l != "" && !send(ctx, in.lines, strings.TrimRight(l, "\r\n")) {
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return in, nil
}

func send(ctx context.Context, ch chan<- string, l string) bool {
	select {
	case ch <- l:
		return true
	case <-ctx.Done():
		return false
	}
}

// terminal is the CLI Replier: Markdown stripped to plain text; approvals
// asked on the same input as y/N.
type terminal struct {
	mu sync.Mutex
	w  io.Writer
	// in answers the approval question (nil: approvals are denied).
	in   *chatInput
	turn chan struct{} // held by the turn under way (takeTurn)
	log  *slog.Logger
}

// takeTurn waits until no other turn runs in this terminal (the user's
// line or a scheduled task), or ctx ends: the terminal is one chat, whose
// turns go one at a time as a Telegram chat's do. onWait, when not nil,
// is called once if it has to wait.
func (t *terminal) takeTurn(ctx context.Context, onWait func()) (release func(), err error) {
	t.mu.Lock()
	if t.turn == nil {
		t.turn = make(chan struct{}, 1)
	}
	turn := t.turn
	t.mu.Unlock()
	release = func() { <-turn }
	select {
	case turn <- struct{}{}:
		return release, nil
	default:
	}
	if onWait != nil {
		onWait()
	}
	select {
	case turn <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *terminal) Typing(context.Context)          {}
func (t *terminal) Partial(context.Context, string) {}

func (t *terminal) Final(_ context.Context, text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := fmt.Fprintln(t.w, plainText(text))
	return err
}

// Approve asks on the terminal with the keyboard's choices: [y]es once,
// [h]our here and [a]lways here where a standing grant may be offered,
// [N]o (anything else).
func (t *terminal) Approve(ctx context.Context, req *kairos.ApprovalRequest) (kairos.Decision, error) {
	by := kairos.UserKey(kairos.ChannelCLI, cliUserID())
	if t.in == nil {
		return kairos.Decision{Outcome: kairos.DecisionDenied, By: by, At: time.Now()}, nil
	}
	question := "Approve? [y/N] "
	if req.Grantable {
		question = "Approve? [y]es once / [h]our / [a]lways / [N]o "
	}
	t.mu.Lock()
	fmt.Fprintf(t.w, "Approval needed: %s\nWhy: %s\n", plainText(req.Summary), plainText(req.Reason))
	if d := strings.TrimSpace(req.Detail); d != "" {
		fmt.Fprintf(t.w, "%s\n", kairos.Clip(d, 4000))
	}
	if req.NoGrant != "" {
		fmt.Fprintf(t.w, "Once only: %s.\n", req.NoGrant)
	}
	if req.Grantable {
		fmt.Fprintf(t.w, "[h]our and [a]lways cover %s here.\n", req.TargetLabel)
	}
	fmt.Fprintf(t.w, "(answer by %s)\n", termClock(req.ExpiresAt, req.Zone))
	if t.in.ed == nil {
		fmt.Fprint(t.w, question) // at a terminal the question is the prompt: a redraw keeps it
	}
	t.mu.Unlock()
	actx, cancel := context.WithDeadline(ctx, req.ExpiresAt)
	defer cancel()
	l, ok := t.in.ask(actx, question)
	dec := kairos.Decision{Outcome: kairos.DecisionDenied, By: by, At: time.Now()}
	switch a := strings.ToLower(strings.TrimSpace(l)); {
	case ok && (a == "y" || a == "yes"):
		dec.Outcome = kairos.DecisionApproved
	case ok && req.Grantable && (a == "h" || a == "hour"):
		dec.Outcome, dec.Scope = kairos.DecisionApproved, kairos.GrantHour
	case ok && req.Grantable && (a == "a" || a == "always"):
		dec.Outcome, dec.Scope = kairos.DecisionApproved, kairos.GrantAlways
	case ctx.Err() != nil:
		return kairos.Decision{Outcome: kairos.DecisionDenied}, ctx.Err()
	case !ok && actx.Err() != nil:
		return kairos.Decision{Outcome: kairos.DecisionExpired, At: time.Now()}, nil
	}
	return dec, nil
}

// termClock is a request's expiry as a clock time in the user's zone.
func termClock(t time.Time, zone string) string {
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		loc, zone = time.Local, "local time"
	}
	return t.In(loc).Format("15:04") + " " + zone
}

var (
	mdFence  = regexp.MustCompile("(?m)^```[a-zA-Z0-9_-]*\\s*$\\n?")
	mdLink   = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^)\s]+)\)`)
	mdHeader = regexp.MustCompile(`(?m)^#{1,6}\s+`)
	mdBold   = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	mdItal   = regexp.MustCompile(`(^|[\s(])[*_]([^*_\s][^*_\n]*?)[*_]([\s).,!?:;]|$)`)
	mdCode   = regexp.MustCompile("`([^`\n]+)`")
	mdEscape = regexp.MustCompile(`\\([\\*_\x60\[\]~])`)
)

// plainText strips the model's Markdown for a terminal: fences, headers,
// bold, italics and inline code marks go; links become "text (url)";
// bullets and line breaks stay.
func plainText(s string) string {
	s = mdFence.ReplaceAllString(s, "")
	s = mdLink.ReplaceAllString(s, "$1 ($2)")
	s = mdHeader.ReplaceAllString(s, "")
	s = mdBold.ReplaceAllString(s, "$1$2")
	s = mdItal.ReplaceAllString(s, "$1$2$3")
	s = mdCode.ReplaceAllString(s, "$1")
	s = mdEscape.ReplaceAllString(s, "$1")
	return strings.TrimRight(s, "\n")
}
