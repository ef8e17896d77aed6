package clockstate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
)

// §7.3: "clock it for the group: …" parses as a group-relevant clock-it.
func TestSection7_3_GroupClockItParses(t *testing.T) {
	for in, want := range map[string]string{
		"clock it for the group: deploying v2 tonight": "deploying v2 tonight",
		"Clock it for everyone - pizza at 8":           "pizza at 8",
		"clock it for the whole team: release freeze":  "release freeze",
	} {
		d := clockstate.ParseDirective(in)
		if d.Kind != clockstate.DirClockIt || !d.Group || d.Arg != want {
			t.Errorf("%q = %+v, want a group clock-it of %q", in, d, want)
		}
	}
	if d := clockstate.ParseDirective("clock it: going for a run"); d.Group {
		t.Errorf("a personal clock-it parsed as a group one: %+v", d)
	}
}

// §7.3: latest actions are per user unless explicitly clocked as
// group-relevant; a group-relevant one is every participant's to see and
// to close, in that group only.
func TestSection7_3_GroupRelevantActions(t *testing.T) {
	h := newHarness(t, nil)
	const group = int64(-700)
	env := h.send(grp(group, 1, "clock it for the group: deploying v2 tonight", t0))
	if !strings.Contains(env.Reply, "Clocked for the group: Deploying v2") {
		t.Fatalf("reply %q", env.Reply)
	}
	h.send(grp(group, 1, "clock it: buying a new laptop", t0.Add(time.Minute)))
	thread := grp(group, 2, "", t0).ThreadKey()
	st, err := h.cs.LoadClockState(h.ctx, kairos.UserKey(kairos.ChannelTelegram, 2), thread)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, a := range st.Actions {
		labels = append(labels, a.Label)
	}
	if got := strings.Join(labels, "|"); !strings.Contains(got, "Deploying v2") || strings.Contains(got, "laptop") {
		t.Fatalf("user 2 sees %q: want the group's action and not user 1's own", got)
	}
	// Another participant closes it.
	if env := h.send(grp(group, 2, "clock: done deploying", t0.Add(2*time.Hour))); !strings.Contains(env.Reply, "Marked done: Deploying v2") {
		t.Fatalf("close reply %q", env.Reply)
	}
	// Not in another thread, and not offered outside a group.
	other, _ := h.cs.LoadClockState(h.ctx, kairos.UserKey(kairos.ChannelTelegram, 2), grp(-701, 2, "", t0).ThreadKey())
	for _, a := range other.Actions {
		if strings.Contains(a.Label, "eploying") {
			t.Fatalf("the group action leaked into another group: %+v", a)
		}
	}
	if env := h.send(dm(3, "clock it for the group: nap", t0)); !strings.Contains(env.Reply, "works in a group chat") {
		t.Fatalf("DM reply %q", env.Reply)
	}
}
