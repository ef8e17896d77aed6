package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
)

func init() {
	register(Command{Name: "chat", Short: "the same pipeline on this terminal (channel cli)",
		Long: `Talk to the agent with no Telegram: you are the local user (your uid) and
the operator. The slash commands of the bot work here; Ctrl-D or Ctrl-C ends.`,
		Config: true, Run: func(ctx context.Context, m *Main, _ *Invocation) error { return m.runChat(ctx) }})
}

// runChat is `kairos chat`: the same pipeline on the terminal, channel cli.
// The local user is the operator (they run the binary).
func (m *Main) runChat(ctx context.Context) error {
	c, err := m.openCore(ctx)
	if err != nil {
		return err
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(m.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	out := &terminal{w: m.Stdout, lines: lines}
	cmds := m.commands(c)
	fmt.Fprintln(m.Stdout, "Kairos: type a message, /help for commands, Ctrl-D to quit.")
	for {
		fmt.Fprint(m.Stdout, "> ")
		var line string
		select {
		case <-ctx.Done():
			return nil
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(m.Stdout)
				return nil
			}
			line = strings.TrimSpace(l)
		}
		if line == "" {
			continue
		}
		in := cliMessage(line, time.Now().UTC())
		if strings.HasPrefix(line, "/") {
			name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
			cmd, ok := cmds[name]
			if !ok {
				fmt.Fprintf(m.Stdout, "Unknown command /%s. Known: %s\n", name, strings.Join(commandNames(cmds), ", "))
				continue
			}
			text, err := cmd.Run(ctx, in, strings.TrimSpace(args))
			if err != nil {
				text = kairos.ErrorMessage(err)
			}
			out.Final(ctx, text)
			continue
		}
		if len(line) > kairos.MaxInboundText {
			fmt.Fprintf(m.Stdout, "That message is too long (%d bytes; the limit is %d).\n", len(line), kairos.MaxInboundText)
			continue
		}
		if err := c.agent.HandleMessage(ctx, in, out); err != nil {
			c.log.Error("turn failed", "err", err)
			fmt.Fprintln(m.Stdout, "Sorry, something went wrong with that message.")
		}
	}
}

func commandNames(cmds map[string]bot.Command) []string {
	var ns []string
	for n := range cmds {
		ns = append(ns, "/"+n)
	}
	return ns
}

// terminal is the CLI Replier: the final text is printed as it is
// (Markdown reads fine on a terminal); approvals are asked on stdin.
type terminal struct {
	mu    sync.Mutex
	w     io.Writer
	lines <-chan string
}

func (t *terminal) Typing(context.Context)          {}
func (t *terminal) Partial(context.Context, string) {}

func (t *terminal) Final(_ context.Context, text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := fmt.Fprintln(t.w, text)
	return err
}

func (t *terminal) Approve(ctx context.Context, req *kairos.ApprovalRequest) (kairos.Decision, error) {
	t.mu.Lock()
	if req.Detail != "" {
		fmt.Fprintf(t.w, "%s\n", req.Detail)
	}
	fmt.Fprintf(t.w, "Approval needed: %s\nWhy: %s\nApprove? [y/N] ", req.Summary, req.Reason)
	t.mu.Unlock()
	tm := time.NewTimer(time.Until(req.ExpiresAt))
	defer tm.Stop()
	select {
	case l := <-t.lines:
		if a := strings.ToLower(strings.TrimSpace(l)); a == "y" || a == "yes" {
			return kairos.Decision{Outcome: kairos.DecisionApproved, At: time.Now()}, nil
		}
		return kairos.Decision{Outcome: kairos.DecisionDenied, At: time.Now()}, nil
	case <-tm.C:
		return kairos.Decision{Outcome: kairos.DecisionExpired, At: time.Now()}, nil
	case <-ctx.Done():
		return kairos.Decision{Outcome: kairos.DecisionDenied}, ctx.Err()
	}
}

// cliMessage is a terminal line as an Inbound: channel cli, a DM with the
// local user (their uid).
func cliMessage(text string, at time.Time) *kairos.Inbound {
	uid := int64(os.Getuid())
	return &kairos.Inbound{Channel: kairos.ChannelCLI, ChatID: uid, ChatKind: kairos.ChatDM, UserID: uid,
		UserName: os.Getenv("USER"), Text: text, Date: at}
}
