package desk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
)

// replier records what a door would show.
type replier struct{ finals []string }

func (r *replier) Typing(context.Context)          {}
func (r *replier) Partial(context.Context, string) {}
func (r *replier) Final(_ context.Context, s string) error {
	r.finals = append(r.finals, s)
	return nil
}
func (r *replier) Approve(context.Context, *kairos.ApprovalRequest) (kairos.Decision, error) {
	return kairos.Decision{}, nil
}

type next struct{ got []string }

func (n *next) HandleMessage(_ context.Context, in *kairos.Inbound, out kairos.Replier) error {
	n.got = append(n.got, in.Text)
	return out.Final(context.Background(), "turn")
}

func newDesk(p *kairos.Policy, n *next) (*desk.Desk, *[]string) {
	var ran []string
	t := desk.NewTable()
	for _, c := range []desk.Command{{Name: "mine", Description: "a user's command"}, {Name: "secret", Description: "an operator's", Operators: true},
		{Name: "link", Description: "private", Private: true}, {Name: "gone", Description: "absent", Available: func(*kairos.Policy) bool { return false }}} {
		name := c.Name
		c.Run = func(context.Context, *kairos.Inbound, string) (string, error) {
			ran = append(ran, name)
			return "ran " + name, nil
		}
		t.Add(c)
	}
	return desk.New(desk.Config{Table: t, Policy: func() *kairos.Policy { return p }, Next: n}), &ran
}

// TestTheRuleForEveryDoor is the desk's rule as a table over every
// surface, origin, role and command: a command runs only from the
// sender's own words, by a role that may run it, where it may answer;
// anything else is answered without running it.
func TestTheRuleForEveryDoor(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Access.Operators, p.Access.AllowedUsers = []int64{1}, []int64{2}
	surfaces := []kairos.Surface{kairos.SurfacePrivate, kairos.SurfaceGroup, kairos.SurfaceTerminal, kairos.SurfaceAPI}
	origins := []kairos.Origin{kairos.OriginOwn, kairos.OriginForwarded, kairos.OriginChannel}
	for _, s := range surfaces {
		for _, o := range origins {
			for _, user := range []int64{1, 2} {
				for _, cmd := range []string{"mine", "secret", "link", "gone", "nope"} {
					n := &next{}
					d, ran := newDesk(p, n)
					out := &replier{}
					in := &kairos.Inbound{Surface: s, Origin: o, UserID: user, ChatID: user, Text: "/" + cmd + " x"}
					if o != kairos.OriginOwn {
						in.Untrusted = "a forwarded message"
					}
					if err := d.HandleMessage(context.Background(), in, out); err != nil {
						t.Fatal(err)
					}
					operator := user == 1 || s == kairos.SurfaceTerminal
					want := o == kairos.OriginOwn && (cmd == "mine" || (cmd == "secret" && operator) || (cmd == "link" && s.Private()))
					name := fmt.Sprintf("%s/%q/user %d: /%s", s, o, user, cmd)
					if got := len(*ran) == 1; got != want {
						t.Errorf("%s: ran %v, want %v (answer %q)", name, got, want, out.finals)
					}
					if len(n.got) != 0 {
						t.Errorf("%s: a command reached the model", name)
					}
					if len(out.finals) != 1 {
						t.Errorf("%s: %d answers", name, len(out.finals))
					}
					if o != kairos.OriginOwn && !strings.Contains(out.finals[0], "did not run it") {
						t.Errorf("%s: %q, want the not-run note", name, out.finals[0])
					}
				}
			}
		}
	}
}

// TestDirectivesOnlyFromOwnWords: a forwarded clock directive is not
// run and never reaches a turn; an own one goes to the turn (the clock
// applies it there); plain forwarded text is a turn, as content.
func TestDirectivesOnlyFromOwnWords(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Access.AllowedUsers = []int64{2}
	for _, text := range []string{"clock: tz Europe/Lisbon", "clock it: leaving", "Clock: kind project", "clock: done"} {
		n := &next{}
		d, _ := newDesk(p, n)
		out := &replier{}
		d.HandleMessage(context.Background(), &kairos.Inbound{UserID: 2, Text: text, Origin: kairos.OriginForwarded, Untrusted: "a forwarded message"}, out)
		if len(n.got) != 0 || !strings.Contains(out.finals[0], "did not run it") {
			t.Errorf("forwarded %q: turn %v, answer %q", text, n.got, out.finals)
		}
		d.HandleMessage(context.Background(), &kairos.Inbound{UserID: 2, Text: text}, out)
		if len(n.got) != 1 {
			t.Errorf("own %q did not reach the turn", text)
		}
	}
	n := &next{}
	d, _ := newDesk(p, n)
	d.HandleMessage(context.Background(), &kairos.Inbound{UserID: 2, Text: "look at this article", Origin: kairos.OriginForwarded, Untrusted: "a forwarded message"}, &replier{})
	if len(n.got) != 1 {
		t.Errorf("forwarded content did not reach the turn")
	}
}

// TestHelpPromisesOnlyWhatExists: /help lists the commands a principal
// may run, marks private ones in a group, and promises no disabled tool.
func TestHelpPromisesOnlyWhatExists(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Access.AllowedUsers = []int64{2}
	p.Agent.DisabledTools = []string{"search"}
	p.Features.CLIExec = false
	d, _ := newDesk(p, &next{})
	out := &replier{}
	d.HandleMessage(context.Background(), &kairos.Inbound{UserID: 2, Surface: kairos.SurfaceGroup, Text: "/help"}, out)
	help := out.finals[0]
	for _, bad := range []string{"/secret", "/gone", "search the web", "run code"} {
		if strings.Contains(help, bad) {
			t.Errorf("help says %q:\n%s", bad, help)
		}
	}
	if !strings.Contains(help, "/mine") || !strings.Contains(help, "/link: private (in a private chat)") {
		t.Errorf("help:\n%s", help)
	}
}

// TestParseCommand: what counts as a command.
func TestParseCommand(t *testing.T) {
	for text, want := range map[string]string{"/help": "help", "/Usage@kairos_bot lift 3": "usage", "/clock\ntz UTC": "clock",
		"hello /help": "", "/": "", "//x": "", "/a/b": ""} {
		name, _, ok := desk.ParseCommand(text)
		if (want != "") != ok || name != want {
			t.Errorf("%q: %q %v, want %q", text, name, ok, want)
		}
	}
}

// FuzzParseCommand: a command's name is never empty, never holds a space,
// a slash or an upper-case letter, and only text starting with "/" is one.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/help", "/Usage@bot lift 3", "/clock\ntz", "hi", "/", "/a/b", "/\u00a0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		name, _, ok := desk.ParseCommand(text)
		if !ok {
			return
		}
		if !strings.HasPrefix(text, "/") || name == "" || strings.ContainsAny(name, " /\t\n") || name != strings.ToLower(name) {
			t.Fatalf("%q parsed as command %q", text, name)
		}
	})
}
