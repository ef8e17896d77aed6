package desk

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	codetool "github.com/kairos-agent/kairos/tools/code"
)

// Basics are the commands about the user's own conversation, clock, mode,
// memories and code runs, and the operators' /policy.
type Basics struct {
	// EndSession ends the thread's session (its summary carries over)
	// and names the new one.
	EndSession func(ctx context.Context, thread, user, name string, at time.Time) (string, error)
	Code       kairos.CodeExecutionStore
	// CodeChart sends /codestats' picture where the door can (optional).
	CodeChart func(ctx context.Context, st *kairos.CodeStats)
	Skills    *Skills // /codestats' per-skill part (optional)
	Clock     func(ctx context.Context, in *kairos.Inbound, args string) (string, error)
	Mode      func(ctx context.Context, in *kairos.Inbound, args string) (string, error)
	Memories  kairos.MemoryStore
	// PolicyText is /policy's summary of the policy in force.
	PolicyText func() string
	Now        func() time.Time
}

// Commands are the table's entries for b.
func (b *Basics) Commands() []Command {
	return []Command{
		{Name: "newsession", Description: "End this session (its summary carries over) and start a new one", Run: b.newSession},
		{Name: "codestats", Description: "Code execution stats for the last 7 days", Run: b.codeStats},
		{Name: "codefailures", Description: "The last code failures: /codefailures [n]", Run: b.codeFailures},
		{Name: "clock", Description: "Show or set clock settings: tz, kind, mode", Run: b.Clock},
		{Name: "mode", Description: "Show or change the DISCUSS/DIAGNOSE/EXECUTE mode", Run: b.Mode},
		{Name: "memory", Description: "What I remember about you", Run: b.memory},
		{Name: "policy", Description: "The active policy (operators)", Operators: true, Private: true,
			Run: func(context.Context, *kairos.Inbound, string) (string, error) {
				return "```\n" + b.PolicyText() + "\n```", nil
			}},
	}
}

func (b *Basics) newSession(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
	name, err := b.EndSession(ctx, in.ThreadKey(), in.UserKey(), strings.TrimSpace(args), in.Date)
	if err != nil {
		return "", err
	}
	return "Started a new session: *" + EscapeMD(name) + "*. I'll keep a summary of the last one in mind.", nil
}

func (b *Basics) codeStats(ctx context.Context, in *kairos.Inbound, _ string) (string, error) {
	st, err := b.Code.CodeStats(ctx, b.Now().Add(-7*24*time.Hour))
	if err != nil {
		return "", err
	}
	if b.CodeChart != nil {
		b.CodeChart(ctx, st)
	}
	text := codetool.FormatStats(st)
	if b.Skills != nil {
		text += b.Skills.Stats(ctx, in.UserKey())
	}
	return text, nil
}

func (b *Basics) codeFailures(ctx context.Context, _ *kairos.Inbound, args string) (string, error) {
	n := 5
	if args != "" {
		v, err := strconv.Atoi(args)
		if err != nil || v < 1 || v > 20 {
			return "", kairos.Errorf(kairos.EINVALID, "Usage: /codefailures [n], with n from 1 to 20.")
		}
		n = v
	}
	fs, err := b.Code.CodeFailures(ctx, n)
	if err != nil {
		return "", err
	}
	return codetool.FormatFailures(fs), nil
}

// memory is /memory [query]: what Kairos remembers about the user.
func (b *Basics) memory(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
	ms, err := b.Memories.RecallMemories(ctx, kairos.MemoryFilter{UserKey: in.UserKey(), Query: args, Limit: 15})
	if err != nil {
		return "", err
	}
	if len(ms) == 0 {
		return "I don't remember anything about you yet.", nil
	}
	var sb strings.Builder
	sb.WriteString("What I remember:\n")
	for _, mm := range ms {
		fmt.Fprintf(&sb, "- [%s] %s\n", mm.Type, EscapeMD(mm.Content))
	}
	return sb.String(), nil
}
