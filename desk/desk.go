package desk

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
)

// Handler answers a message that is not a command: the media step and
// the agent behind it.
type Handler interface {
	HandleMessage(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error
}

// Access says whether a user admitted at run time (pairing, kairos access
// allow) may talk to the agent.
type Access interface {
	HasAccess(ctx context.Context, userID int64) (bool, error)
}

// Config wires a Desk.
type Config struct {
	Table  *Table
	Policy func() *kairos.Policy
	Access Access // optional
	Next   Handler
	Logger *slog.Logger
}

// Desk is the front desk (see the package comment).
type Desk struct {
	cfg Config
	log *slog.Logger
}

// New returns a desk.
func New(cfg Config) *Desk {
	if cfg.Table == nil {
		cfg.Table = NewTable()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Desk{cfg: cfg, log: log.With("component", "desk")}
}

// Table is the desk's command table.
func (d *Desk) Table() *Table { return d.cfg.Table }

// Principal is who sent in: an operator, an allowed user (by the policy
// or admitted at run time) or a stranger.
func (d *Desk) Principal(ctx context.Context, userID int64) (kairos.Principal, error) {
	return PrincipalOf(ctx, d.cfg.Policy(), d.cfg.Access, userID)
}

// PrincipalOf is the one rule of who a user is: an operator or allowed
// user of the policy p, one admitted at run time (access: pairing,
// kairos access allow, a claimed operator; may be nil), else a stranger.
// The bot's refusal of strangers and the API's check ask it too.
func PrincipalOf(ctx context.Context, p *kairos.Policy, access Access, userID int64) (kairos.Principal, error) {
	switch {
	case p.IsOperator(userID):
		return kairos.Principal{UserID: userID, Role: kairos.OperatorRole}, nil
	case p.IsAllowed(userID):
		return kairos.Principal{UserID: userID, Role: kairos.UserRole}, nil
	case access != nil:
		ok, err := access.HasAccess(ctx, userID)
		if err != nil {
			return kairos.Principal{}, err
		}
		if ok {
			return kairos.Principal{UserID: userID, Role: kairos.UserRole}, nil
		}
	}
	return kairos.Principal{UserID: userID, Role: kairos.StrangerRole}, nil
}

// Notes the desk answers with.
const (
	NotRunNote      = "That %s looks like a command, but I only run commands you type yourself: I did not run it. If you meant it, send it in your own words."
	PrivateOnlyNote = "Send this to me in a private chat: its answer is only for you."
	OperatorsNote   = "Only an operator can do that."
	unknownNote     = "I don't know the command /%s. Send /help for the list."
)

// HandleMessage is every door's way in, once the door has let the sender
// through (a stranger never reaches it: the door refuses or pairs). The
// terminal's user is the operator; its door says so with Role.
func (d *Desk) HandleMessage(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
	in.Surface = kairos.SurfaceOf(in)
	pr, err := d.principal(ctx, in)
	if err != nil {
		return err
	}
	if pr.Role == kairos.StrangerRole {
		return out.Final(ctx, Reply(kairos.Errorf(kairos.EFORBIDDEN, "You may not talk to me yet.")))
	}
	name, args, isCmd := ParseCommand(in.Text)
	isCmd = isCmd && len(in.Attachments) == 0
	if !Own(in) {
		if isCmd || clockstate.ParseDirective(in.Text).Kind != "" {
			return out.Final(ctx, fmt.Sprintf(NotRunNote, originWord(in)))
		}
		return d.cfg.Next.HandleMessage(ctx, in, out)
	}
	if isCmd {
		return d.command(ctx, in, out, pr, name, args)
	}
	return d.cfg.Next.HandleMessage(ctx, in, out)
}

// principal is the sender; the terminal's local user is the operator.
func (d *Desk) principal(ctx context.Context, in *kairos.Inbound) (kairos.Principal, error) {
	if in.Surface == kairos.SurfaceTerminal {
		return kairos.Principal{UserID: in.UserID, Role: kairos.OperatorRole}, nil
	}
	return d.Principal(ctx, in.UserID)
}

// Own reports whether in's words are the sender's own: only those run
// commands and clock directives.
func Own(in *kairos.Inbound) bool { return in.Origin == kairos.OriginOwn && in.Untrusted == "" }

func originWord(in *kairos.Inbound) string {
	switch in.Origin {
	case kairos.OriginForwarded:
		return "forwarded message"
	case kairos.OriginChannel:
		return "channel post"
	}
	return "message"
}

// command runs one slash command of the table for pr at in's door.
func (d *Desk) command(ctx context.Context, in *kairos.Inbound, out kairos.Replier, pr kairos.Principal, name, args string) error {
	pol := d.cfg.Policy()
	if name == "help" || name == "start" {
		return out.Final(ctx, d.cfg.Table.Help(pol, pr.Role, in.Surface))
	}
	c := d.cfg.Table.lookup(pol, name)
	switch {
	case c == nil:
		return out.Final(ctx, fmt.Sprintf(unknownNote, name))
	case c.Operators && pr.Role < kairos.OperatorRole:
		return out.Final(ctx, OperatorsNote)
	case c.Private && !in.Surface.Private():
		return out.Final(ctx, PrivateOnlyNote)
	}
	reply, err := run(ctx, c, in, args)
	if err != nil {
		if Fault(err) {
			d.log.Error("command failed", "command", name, "err", err)
		}
		return out.Final(ctx, Reply(err))
	}
	return Render(ctx, out, reply)
}

func run(ctx context.Context, c *Command, in *kairos.Inbound, args string) (*kairos.Outgoing, error) {
	if c.Reply != nil {
		return c.Reply(ctx, in, args)
	}
	text, err := c.Run(ctx, in, args)
	return &kairos.Outgoing{Text: text}, err
}

// Render shows an answer at a door: with its buttons where the door has
// them, its words alone elsewhere. An empty answer says nothing (the
// command sent its own, a picture say).
func Render(ctx context.Context, out kairos.Replier, o *kairos.Outgoing) error {
	if o == nil || o.Text == "" {
		return nil
	}
	if br, ok := out.(kairos.ButtonReplier); ok && len(o.Buttons) > 0 {
		return br.FinalWithButtons(ctx, o.Text, o.Buttons)
	}
	return out.Final(ctx, o.Text)
}
