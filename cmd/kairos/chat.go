package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
)

func init() {
	register(Command{Name: "chat", Usage: "[-v]", Short: "the same pipeline on this terminal (channel cli)",
		Long: `Talk to the agent with no Telegram: you are the local user and the operator.
Line editing and history (Ctrl-R searches) when stdin is a terminal. The bot's
slash commands work here (/help lists them); approvals are asked as y/N;
reminders you set arrive in this terminal while it runs. Ctrl-C clears the
line being typed; Ctrl-C on an empty line, or Ctrl-D, ends the chat.
The log goes to KAIROS_DATA_DIR/chat.log (-v shows it here instead); what
stops the chat from working (a model it cannot reach) is said once, in words.`,
		Flags: func(fs *flag.FlagSet) {
			fs.Bool("v", false, "show the log lines in the terminal (default: KAIROS_DATA_DIR/chat.log)")
		},
		Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			if !inv.Bool("v") {
				m.chatLogFile() // chat_notice.go
			}
			return m.runChat(ctx)
		}})
}

func logRank(level string) int {
	return map[string]int{"debug": 0, "info": 1, "warn": 2, "error": 3}[level]
}

// runChat is `kairos chat`: the same pipeline on the terminal, channel cli.
// The local user is the operator (they run the binary).
func (m *Main) runChat(ctx context.Context) error {
	c, err := m.openCore(ctx)
	if err != nil {
		return err
	}
	ctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	in, err := m.openLines(ctx, interrupt)
	if err != nil {
		return err
	}
	defer in.Close()
	out := &terminal{w: in.Stdout(), in: in, log: c.log}
	c.attachUsageTerminal(out.w)
	m.tellModelTrouble(ctx, c, out) // chat_notice.go
	m.startChatSchedules(ctx, c, out)
	fmt.Fprintln(out.w, "Kairos: type a message, /help for commands, Ctrl-D (or Ctrl-C on an empty line) to quit.")
	for {
		line, ok := in.next(ctx)
		if !ok {
			fmt.Fprintln(out.w)
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		msg := cliMessage(line, c.now().UTC())
		if len(line) > kairos.MaxInboundText {
			out.Final(ctx, fmt.Sprintf("That message is too long (%d bytes; the limit is %d). Please send it in smaller parts.", len(line), kairos.MaxInboundText))
			continue
		}
		if err := chatTurn(ctx, c, msg, out); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if desk.Fault(err) {
				c.log.Error("turn failed", "err", err)
			}
			out.Final(ctx, desk.Reply(err))
		}
	}
}

// chatTurn answers one line, in the terminal's turn (a scheduled task
// takes it too). Its bookkeeping (clock marks, mode, messages,
// usage) is deferred and commits when the turn ends, as a Telegram
// update's does: a turn interrupted before its answer (Ctrl-C, SIGINT)
// leaves nothing in the database, one that answered is kept whole.
func chatTurn(ctx context.Context, c *core, msg *kairos.Inbound, out *terminal) error {
	release, err := out.takeTurn(ctx, nil) // a scheduled task may hold it
	if err != nil {
		return err
	}
	defer release()
	tctx := c.updates.DeferWrites(ctx)
	err = c.desk.HandleMessage(tctx, msg, out)
	if err != nil && ctx.Err() != nil {
		return err // interrupted: the deferred writes are dropped
	}
	if cerr := c.updates.EndWrites(context.WithoutCancel(tctx)); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// cliMessage is a terminal line as an Inbound: channel cli, a DM with the
// local user.
func cliMessage(text string, at time.Time) *kairos.Inbound {
	uid := cliUserID()
	return &kairos.Inbound{Channel: kairos.ChannelCLI, Surface: kairos.SurfaceTerminal, ChatID: uid, ChatKind: kairos.ChatDM, UserID: uid,
		UserName: os.Getenv("USER"), Text: text, Date: at}
}

// cliUserID is the local user's id: their uid, or 1 for root (uid 0 is
// "no user" to the stores: reminders need a user).
func cliUserID() int64 {
	if uid := os.Getuid(); uid > 0 {
		return int64(uid)
	}
	return 1
}
