package desk

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// GrantButtonPrefix starts the callback data of the /grants buttons
// (Revoke, tasks on/off).
const GrantButtonPrefix = "gr:"

// Grants is the desk's side of the standing approvals (kairos.Grant) as
// people see and revoke them: /grants and its buttons in Telegram and the
// terminal, the API's grants and the console's page. Every list reads
// Live, which first drops the grants that are gone: expired, or of a
// tool, an MCP server or a skill version that no longer exists.
type Grants struct {
	Store  kairos.GrantStore
	Skills kairos.SkillStore
	Tools  kairos.ScopedToolRegistry
	Policy func() *kairos.Policy
	// Zone is a user's zone (nil: UTC), for the times a list shows.
	Zone   func(ctx context.Context, userKey string) *time.Location
	Logger *slog.Logger
}

// Command is /grants. It answers only in a private chat (Private): a
// grant names what the user lets Kairos do without asking (their hosts,
// their tools), which is nobody else's business, and its Revoke buttons
// are theirs. An operator there, and the terminal's user, see everyone's.
func (g *Grants) Command() Command {
	return Command{Name: "grants", Description: "Your standing approvals (Allow 1h, Always here), each with a Revoke button",
		Private: true, Reply: g.reply}
}

func (g *Grants) reply(ctx context.Context, in *kairos.Inbound, args string) (*kairos.Outgoing, error) {
	all := in.Surface == kairos.SurfaceTerminal || g.Policy().IsOperator(in.UserID)
	if verb, rest, _ := strings.Cut(strings.TrimSpace(args), " "); verb != "" {
		// The buttons in words: /grants revoke ID, /grants tasks ID on|off.
		id, onoff, _ := strings.Cut(strings.TrimSpace(rest), " ")
		text, err := g.apply(ctx, in.UserKey(), all, verb, id, onoff)
		return &kairos.Outgoing{Text: text}, err
	}
	filter := kairos.GrantFilter{UserKey: in.UserKey()}
	if all {
		filter = kairos.GrantFilter{}
	}
	gs, err := g.Live(ctx, filter)
	if err != nil {
		return nil, err
	}
	if len(gs) == 0 {
		return &kairos.Outgoing{Text: "No standing approvals. When I ask before doing something, *Allow 1h* or *Always here* lets me do the same thing in that chat without asking (until you revoke it here)."}, nil
	}
	loc := time.UTC
	if g.Zone != nil {
		if l := g.Zone(ctx, in.UserKey()); l != nil {
			loc = l
		}
	}
	out := &kairos.Outgoing{}
	var sb strings.Builder
	if all {
		sb.WriteString("Standing approvals (everyone's):\n")
	} else {
		sb.WriteString("Your standing approvals:\n")
	}
	for i, gr := range gs {
		n := strconv.Itoa(i + 1)
		fmt.Fprintf(&sb, "%s. %s\n", n, EscapeMD(GrantLine(gr, in.UserKey(), all, loc)))
		tasks := kairos.Button{Text: "Tasks may use " + n, Data: GrantButtonPrefix + "tasks:" + gr.ID + ":on"}
		if gr.CoversTasks {
			tasks = kairos.Button{Text: "Not for tasks " + n, Data: GrantButtonPrefix + "tasks:" + gr.ID + ":off"}
		}
		out.Buttons = append(out.Buttons, []kairos.Button{{Text: "Revoke " + n, Data: GrantButtonPrefix + "revoke:" + gr.ID}, tasks})
	}
	sb.WriteString("\nRevoke one with /grants revoke ID; let scheduled tasks use one with /grants tasks ID on.")
	out.Text = sb.String()
	return out, nil
}

// GrantLine describes one grant: what, where, until when, its use, tasks.
func GrantLine(g *kairos.Grant, me string, all bool, loc *time.Location) string {
	until := "until revoked"
	if !g.ExpiresAt.IsZero() {
		until = "until " + g.ExpiresAt.In(loc).Format("15:04 Mon 2 Jan") + " (" + loc.String() + ")"
	}
	used := "never used"
	if g.Uses > 0 {
		used = fmt.Sprintf("used %d×, last %s", g.Uses, g.LastUsedAt.In(loc).Format("15:04 Mon 2 Jan"))
	}
	tasks := "not for scheduled tasks"
	if g.CoversTasks {
		tasks = "scheduled tasks may use it"
	}
	who := ""
	if all && g.UserKey != me {
		who = g.UserKey + ": "
	}
	return fmt.Sprintf("%s%s (%s), %s, %s; %s; %s; id %s", who, g.Label, g.Tool, ChatWords(g.ThreadKey), until, used, tasks, g.ID)
}

// ChatWords names a thread key as people read it.
func ChatWords(thread string) string {
	parts := strings.Split(thread, ":")
	switch {
	case len(parts) >= 5 && parts[3] == "dm":
		if parts[2] == kairos.ChannelCLI {
			return "in the terminal"
		}
		return "in your private chat"
	case len(parts) >= 7 && parts[5] == "topic":
		return "in group " + parts[4] + ", topic " + parts[6]
	case len(parts) >= 5:
		return "in group " + parts[4]
	}
	return "in " + thread
}

// Button handles a /grants button (callback data after the prefix) by
// Telegram user from: its owner or an operator may press it.
func (g *Grants) Button(ctx context.Context, from int64, data string) (string, bool, error) {
	parts := strings.Split(data, ":")
	if len(parts) < 2 {
		return "", false, kairos.Errorf(kairos.EINVALID, "Unknown button.")
	}
	onoff := ""
	if len(parts) == 3 {
		onoff = parts[2]
	}
	said, err := g.apply(ctx, kairos.UserKey(kairos.ChannelTelegram, from), g.Policy().IsOperator(from), parts[0], parts[1], onoff)
	return said, err == nil && parts[0] == "revoke", err
}

// apply revokes a grant or says whether tasks may use it, for its owner
// or an operator (all).
func (g *Grants) apply(ctx context.Context, me string, all bool, verb, id, onoff string) (string, error) {
	if id == "" || (verb != "revoke" && verb != "tasks") || (verb == "tasks" && onoff != "on" && onoff != "off") {
		return "", kairos.Errorf(kairos.EINVALID, "Usage: /grants, /grants revoke ID, /grants tasks ID on|off (the ids are in /grants).")
	}
	gr, err := g.Store.FindGrant(ctx, id)
	if err != nil {
		return "", err
	}
	if gr.UserKey != me && !all {
		// Another user's grant is not named to them: as if it did not exist.
		return "", kairos.Errorf(kairos.ENOTFOUND, "No standing approval of yours has the id %q.", id)
	}
	if verb == "revoke" {
		if err := g.Revoke(ctx, id, me); err != nil {
			return "", err
		}
		return "Revoked: " + gr.Label + ". I will ask again next time.", nil
	}
	if err := g.Store.SetGrantTasks(ctx, id, onoff == "on"); err != nil {
		return "", err
	}
	if onoff == "on" {
		return "Scheduled tasks in that chat may now use: " + gr.Label + ".", nil
	}
	return "Scheduled tasks no longer use: " + gr.Label + ".", nil
}

// Revoke deletes a grant (ENOTFOUND); by says who, for the log.
func (g *Grants) Revoke(ctx context.Context, id, by string) error {
	if err := g.Store.RevokeGrant(ctx, id); err != nil {
		return err
	}
	g.log().Info("standing approval revoked", "grant", id, "by", by)
	return nil
}

func (g *Grants) log() *slog.Logger {
	if g.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Logger
}

// Live lists the grants in force that still stand for something: expired
// grants and the grants of a tool, MCP server or skill version that no
// longer exists are deleted first. Grants live on the host's clock, as
// the agent keeps them.
func (g *Grants) Live(ctx context.Context, f kairos.GrantFilter) ([]*kairos.Grant, error) {
	now := time.Now()
	if _, err := g.Store.DeleteExpiredGrants(ctx, now); err != nil {
		return nil, err
	}
	gs, err := g.Store.Grants(ctx, f, now)
	if err != nil {
		return nil, err
	}
	out := gs[:0]
	for _, gr := range gs {
		if why := g.gone(ctx, gr); why != "" {
			if err := g.Store.RevokeGrant(ctx, gr.ID); err != nil && kairos.ErrorCode(err) != kairos.ENOTFOUND {
				return nil, err
			}
			g.log().Info("standing approval gone", "grant", gr.ID, "tool", gr.Tool, "why", why)
			continue
		}
		out = append(out, gr)
	}
	return out, nil
}

// gone says why a grant no longer stands for anything ("" when it does):
// its skill's version is not the current one, its MCP server or tool is
// no longer in the policy, or its built-in tool is switched off.
func (g *Grants) gone(ctx context.Context, gr *kairos.Grant) string {
	pol := g.Policy()
	if name, ok := strings.CutPrefix(gr.Tool, kairos.SkillToolPrefix); ok {
		sk, err := g.Skills.FindSkill(ctx, gr.UserKey, name)
		switch {
		case err != nil:
			return "the skill is gone"
		case !sk.Enabled || !pol.Features.SelfUpdate:
			return "the skill is disabled"
		case gr.Target != fmt.Sprintf("%s v%d", gr.Tool, sk.Version):
			return "the skill's version changed"
		}
		return ""
	}
	if server, tool, ok := strings.Cut(gr.Tool, kairos.MCPToolSep); ok {
		srv, listed := pol.MCP.Servers[server]
		if !listed || srv.Disabled || !(slices.Contains(srv.Tools, "*") || slices.Contains(srv.Tools, tool)) {
			return "the MCP server or tool is no longer in the policy"
		}
		return ""
	}
	for _, tl := range g.Tools.ToolsFor(pol, kairos.ToolScope{UserKey: gr.UserKey, All: true}) {
		if tl.Spec().Name == gr.Tool {
			return ""
		}
	}
	return "the tool is switched off"
}
