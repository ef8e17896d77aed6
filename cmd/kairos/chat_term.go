package main

import (
	"bufio"
	"context"
	"errors"
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

// chatInput delivers the terminal's lines on a channel (the approval
// prompt reads the same channel). On a terminal it is chzyer/readline:
// line editing, history in KAIROS_DATA_DIR/chat_history (0600), Ctrl-C
// and Ctrl-D end; otherwise (a pipe, tests) plain lines of any length.
type chatInput struct {
	lines chan string
	rl    *readline.Instance
	w     io.Writer
}

func (c *chatInput) Stdout() io.Writer { return c.w }

// next returns the next line, or false at the end of input.
func (c *chatInput) next(ctx context.Context) (string, bool) {
	select {
	case <-ctx.Done():
		return "", false
	case l, ok := <-c.lines:
		return l, ok
	}
}

func (c *chatInput) Close() {
	if c.rl != nil {
		c.rl.Close()
	}
}

// openLines starts reading the input; interrupt is called on Ctrl-C at a
// terminal (where it is a key, not SIGINT).
func (m *Main) openLines(ctx context.Context, interrupt func()) (*chatInput, error) {
	in := &chatInput{lines: make(chan string), w: m.Stdout}
	if f, ok := m.Stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		hist := ""
		if err := os.MkdirAll(m.Config.DataDir, 0o700); err == nil {
			hist = filepath.Join(m.Config.DataDir, "chat_history")
			if hf, err := os.OpenFile(hist, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				hf.Close()
			}
		}
		rl, err := readline.NewEx(&readline.Config{Prompt: "> ", HistoryFile: hist, HistorySearchFold: true,
			InterruptPrompt: "^C", EOFPrompt: "", Stdout: m.Stdout})
		if err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		in.rl, in.w = rl, rl.Stdout()
		go readTerminal(ctx, rl, in.lines, interrupt)
		return in, nil
	}
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

// lineReader is what readTerminal reads: a *readline.Instance.
type lineReader interface {
	Readline() (string, error)
}

// readTerminal sends the terminal's lines until Ctrl-D (io.EOF: a turn in
// progress still answers, then the chat ends) or Ctrl-C
// (readline.ErrInterrupt: interrupt, which ends the chat at once and
// cancels a turn in progress, as SIGINT does on a pipe). Ctrl-C reaches
// here, not the signal handler: the line editor holds the terminal in raw
// mode, and it reads on while a turn runs.
func readTerminal(ctx context.Context, rl lineReader, lines chan<- string, interrupt func()) {
	defer close(lines)
	for {
		l, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			interrupt()
			return
		}
		if err != nil {
			return
		}
		if !send(ctx, lines, l) {
			return
		}
	}
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
	mu    sync.Mutex
	w     io.Writer
	lines <-chan string
	turn  chan struct{} // held by the turn under way (takeTurn)
	log   *slog.Logger
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
	t.mu.Lock()
	fmt.Fprintf(t.w, "Approval needed: %s\nWhy: %s\n", plainText(req.Summary), plainText(req.Reason))
	if d := strings.TrimSpace(req.Detail); d != "" {
		fmt.Fprintf(t.w, "%s\n", kairos.Clip(d, 4000))
	}
	prompt := "Approve? [y/N] "
	if req.NoGrant != "" {
		fmt.Fprintf(t.w, "Once only: %s.\n", req.NoGrant)
	}
	if req.Grantable {
		fmt.Fprintf(t.w, "[h]our and [a]lways cover %s here.\n", req.TargetLabel)
		prompt = "Approve? [y]es once / [h]our / [a]lways / [N]o "
	}
	fmt.Fprintf(t.w, "(answer by %s) %s", termClock(req.ExpiresAt, req.Zone), prompt)
	t.mu.Unlock()
	tm := time.NewTimer(time.Until(req.ExpiresAt))
	defer tm.Stop()
	by := kairos.UserKey(kairos.ChannelCLI, cliUserID())
	select {
	case l, ok := <-t.lines:
		dec := kairos.Decision{Outcome: kairos.DecisionDenied, By: by, At: time.Now()}
		if !ok {
			return dec, nil
		}
		switch a := strings.ToLower(strings.TrimSpace(l)); {
		case a == "y" || a == "yes":
			dec.Outcome = kairos.DecisionApproved
		case req.Grantable && (a == "h" || a == "hour"):
			dec.Outcome, dec.Scope = kairos.DecisionApproved, kairos.GrantHour
		case req.Grantable && (a == "a" || a == "always"):
			dec.Outcome, dec.Scope = kairos.DecisionApproved, kairos.GrantAlways
		}
		return dec, nil
	case <-tm.C:
		return kairos.Decision{Outcome: kairos.DecisionExpired, At: time.Now()}, nil
	case <-ctx.Done():
		return kairos.Decision{Outcome: kairos.DecisionDenied}, ctx.Err()
	}
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
