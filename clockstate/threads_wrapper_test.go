package clockstate_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// CLOCK.md §7: identities, thread keys and groups, through the wrapper's
// harness.

// §7.0: identities are per channel; user-approved linking shares
// cross-channel timestamps and actions.
func TestSection7_0_IdentityLinking(t *testing.T) {
	h := newHarness(t, nil)
	tg := dm(1, "heading to the gym", t0)
	cli := &kairos.Inbound{Channel: kairos.ChannelCLI, ChatID: 1, ChatKind: kairos.ChatDM, UserID: 1, Text: "hi", Date: t0.Add(3 * time.Hour)}
	h.send(tg)
	env := h.send(cli)
	if env.UserKey != "cli:1" || env.ElapsedAnyChannel != "" || len(env.CheckinActions) != 0 {
		t.Errorf("unlinked identities share state: %+v", env)
	}
	code, err := h.cmd(tg, "link")
	if err != nil {
		t.Fatal(err)
	}
	c := regexp.MustCompile(`\d{6}`).FindString(code)
	if _, err := h.cmd(tg, "link "+c); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("linking with itself: %v", err)
	}
	h.host = t0.Add(3 * time.Hour)
	code, _ = h.cmd(tg, "link")
	c = regexp.MustCompile(`\d{6}`).FindString(code)
	if r, err := h.cmd(cli, "link "+c); err != nil || !strings.Contains(r, "Linked") {
		t.Fatalf("link: %q %v", r, err)
	}
	if _, err := h.cmd(cli, "link "+c); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("code reused: %v", err)
	}
	// Linked: the telegram gym action is continuity on the CLI, and the
	// CLI message counts as the user's last interaction on any channel.
	env = h.send(&kairos.Inbound{Channel: kairos.ChannelCLI, ChatID: 1, ChatKind: kairos.ChatDM, UserID: 1, Text: "back", Date: t0.Add(4 * time.Hour)})
	mustContain(t, env.Text, `"Go to the gym"`)
	st := h.state("telegram:1", tg.ThreadKey())
	if !st.User.LastInteractionAnyChannel.Equal(t0.Add(4 * time.Hour)) {
		t.Errorf("telegram identity any-channel = %v", st.User.LastInteractionAnyChannel)
	}
	if r, _ := h.cmd(tg, ""); !strings.Contains(r, "cli:1") {
		t.Errorf("/clock does not show the link:\n%s", r)
	}
	if _, err := h.cmd(cli, "unlink"); err != nil {
		t.Fatal(err)
	}
	if st := h.state("cli:1", cli.ThreadKey()); len(st.Linked) != 0 {
		t.Errorf("still linked")
	}
}

// §7.3: groups have per-user zones, UTC plus per-participant conversions,
// and per-user actions.
func TestSection7_3_Groups(t *testing.T) {
	h := newHarness(t, nil)
	const chat = -100
	alice, bob := dm(1, "hi", t0), dm(2, "hi", t0)
	if _, err := h.cmd(alice, "home Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cmd(bob, "home America/New_York"); err != nil {
		t.Fatal(err)
	}
	h.send(dm(1, "heading to the gym", t0)) // a DM action of alice
	h.send(grp(chat, 2, "hello all", t0))
	env := h.send(grp(chat, 1, "let's meet tomorrow at 3pm", t0.Add(time.Minute)))
	if env.SessionTZ != "Europe/Berlin" {
		t.Errorf("group session tz for alice = %s", env.SessionTZ)
	}
	mustContain(t, env.Text, "UTC", "2026-02-10T14:00:00Z", "telegram:1 Europe/Berlin 2026-02-10T15:00:00+01:00",
		"telegram:2 America/New_York 2026-02-10T09:00:00-05:00", "differ by 6h")
	mustNotContain(t, env.Text, "gym") // DM actions stay out of the group
	// Bob's view: his own zone, none of alice's actions.
	h.send(grp(chat, 1, "brb", t0.Add(2*time.Minute)))
	env = h.send(grp(chat, 2, "back to the topic", t0.Add(5*time.Hour)))
	if env.SessionTZ != "America/New_York" || len(env.CheckinActions) != 0 {
		t.Errorf("bob: %+v", env)
	}
	st := h.state("telegram:1", env.ThreadKey)
	if len(st.Participants) != 2 || st.Participants[1].DefaultTZ != "America/New_York" {
		t.Errorf("participants %+v", st.Participants)
	}
}

// §7.2: thread keys identify agent, channel and thread.
func TestSection7_2_ThreadKeys(t *testing.T) {
	h := newHarness(t, nil)
	keys := map[string]bool{}
	for _, in := range []*kairos.Inbound{
		dm(1, "hi", t0), dm(2, "hi", t0), grp(-5, 1, "hi", t0),
		{Channel: kairos.ChannelTelegram, ChatID: -5, ChatKind: kairos.ChatGroup, TopicID: 3, UserID: 1, Text: "hi", Date: t0},
		{Channel: kairos.ChannelCLI, ChatID: 1, ChatKind: kairos.ChatDM, UserID: 1, Text: "hi", Date: t0},
	} {
		env := h.send(in)
		if !strings.HasPrefix(env.ThreadKey, "agent:main:"+in.Channel+":") || keys[env.ThreadKey] {
			t.Errorf("thread key %q", env.ThreadKey)
		}
		keys[env.ThreadKey] = true
	}
}
