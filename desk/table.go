package desk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools"
)

// Command is one slash command of the table.
type Command struct {
	Name        string // without the slash: "newsession"
	Description string // one line, for /help and the command menu
	// Operators: only operators may run it (else every allowed user).
	Operators bool
	// Private: it shows secrets, other people's data or a sign-in link,
	// so it answers only where nobody else reads the answer (a private
	// chat, the terminal); elsewhere it says to ask in private.
	Private bool
	// Available, when set, says whether the command exists under the
	// policy in force: a disabled feature's command is absent from help,
	// the menu and the table.
	Available func(p *kairos.Policy) bool
	// Run answers it in words (Markdown).
	Run func(ctx context.Context, in *kairos.Inbound, args string) (string, error)
	// Reply, instead of Run, answers with buttons; a door that has none
	// (the terminal) shows the words.
	Reply func(ctx context.Context, in *kairos.Inbound, args string) (*kairos.Outgoing, error)
}

// Table is the slash commands every door serves. It is filled while
// Kairos is wired, before the doors open; afterwards it is only read.
type Table struct {
	cmds map[string]*Command
}

// NewTable returns a table with /help and /start (both answer the help).
func NewTable() *Table { return &Table{cmds: map[string]*Command{}} }

// Add puts commands in the table; a name twice is a wiring fault.
func (t *Table) Add(cs ...Command) {
	for _, c := range cs {
		if c.Name == "" || (c.Run == nil) == (c.Reply == nil) {
			panic("desk: command without a name, or not one of Run and Reply")
		}
		if _, dup := t.cmds[c.Name]; dup || c.Name == "help" || c.Name == "start" {
			panic("desk: command added twice: " + c.Name)
		}
		t.cmds[c.Name] = &c
	}
}

// lookup returns the command called name if it exists under p.
func (t *Table) lookup(p *kairos.Policy, name string) *Command {
	c, ok := t.cmds[name]
	if !ok || (c.Available != nil && !c.Available(p)) {
		return nil
	}
	return c
}

// Names lists the commands that exist under p, sorted.
func (t *Table) Names(p *kairos.Policy) []string {
	var names []string
	for name := range t.cmds {
		if t.lookup(p, name) != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// MenuEntry is one line of the command menu (setMyCommands).
type MenuEntry struct{ Command, Description string }

// Menu is the command menu everyone is shown: /start, /help, then every
// command an allowed user may run.
func (t *Table) Menu(p *kairos.Policy) []MenuEntry {
	out := []MenuEntry{{"start", "Start talking to Kairos"}, {"help", "What Kairos can do"}}
	for _, name := range t.Names(p) {
		if c := t.cmds[name]; !c.Operators {
			out = append(out, MenuEntry{name, c.Description})
		}
	}
	return out
}

// Help is /help for a principal at a door: the commands they may run, a
// private-only one marked where it does not answer.
func (t *Table) Help(p *kairos.Policy, role kairos.Role, s kairos.Surface) string {
	var b strings.Builder
	b.WriteString("I'm Kairos, your personal assistant. Just write to me." + abilities(p))
	if p.Media.Enabled && s != kairos.SurfaceTerminal {
		b.WriteString(" You can also send voice notes, photos and documents.")
	}
	b.WriteString("\n\nCommands:\n/help: this list\n")
	for _, name := range t.Names(p) {
		c := t.cmds[name]
		if c.Operators && role < kairos.OperatorRole {
			continue
		}
		note := ""
		if c.Private && !s.Private() {
			note = " (in a private chat)"
		}
		fmt.Fprintf(&b, "/%s: %s%s\n", name, c.Description, note)
	}
	b.WriteString("\nSay `clock it: …` to have me remember what you're about to do.")
	return b.String()
}

// ParseCommand splits "/cmd@bot args" into the lower-case name and the
// rest; ok is false when text is not a command.
func ParseCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	first, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		first, rest = text[:i], text[i:]
	}
	first = strings.TrimPrefix(first, "/")
	if at := strings.IndexByte(first, '@'); at >= 0 {
		first = first[:at]
	}
	if first == "" || strings.Contains(first, "/") {
		return "", "", false
	}
	return strings.ToLower(first), strings.TrimSpace(rest), true
}

// abilities says what the tools the policy leaves can do: a disabled
// tool is not promised in the help.
func abilities(p *kairos.Policy) string {
	var can []string
	for _, a := range []struct{ tool, says string }{{"search", "search the web"}, {"code", "run code in a sandbox"},
		{"memory", "remember things"}, {"schedule", "remind you"}} {
		if !tools.Absent(p, a.tool) {
			can = append(can, a.says)
		}
	}
	switch len(can) {
	case 0:
		return ""
	case 1:
		return " I can " + can[0] + "."
	}
	return " I can " + strings.Join(can[:len(can)-1], ", ") + " and " + can[len(can)-1] + "."
}
