package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

var clockT0 = time.Date(2026, 2, 9, 1, 0, 0, 0, time.UTC)

func TestClockStore_RecordUserMessageIsMonotonic(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	const th, u = "agent:main:telegram:dm:1", "telegram:1"
	later := clockT0.Add(time.Hour)
	for _, at := range []time.Time{later, clockT0} { // older mark second
		if err := cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: th, UserKey: u, At: at, AnyChannel: true}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := cs.LoadClockState(ctx, u, th)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Thread.LastInteraction.Equal(later) || !st.Thread.LastUserMessage.Equal(later) {
		t.Errorf("thread = %+v, want last interaction %v", st.Thread, later)
	}
	if !st.User.LastInteractionAnyChannel.Equal(later) {
		t.Errorf("any channel = %v, want %v", st.User.LastInteractionAnyChannel, later)
	}
	if got := st.Thread.LastUserMessageByUser[u]; !got.Equal(later) {
		t.Errorf("by user = %v", got)
	}
	if got := st.User.Channels[th].LastUserMessage; !got.Equal(later) {
		t.Errorf("channels = %v", got)
	}
	agentAt := later.Add(5 * time.Second)
	if err := cs.RecordAgentMessage(ctx, kairos.ClockMark{ThreadKey: th, UserKey: u, At: agentAt}); err != nil {
		t.Fatal(err)
	}
	st, _ = cs.LoadClockState(ctx, u, th)
	if !st.Thread.LastAgentMessage.Equal(agentAt) || !st.Thread.LastInteraction.Equal(agentAt) {
		t.Errorf("after agent: %+v", st.Thread)
	}
	if !st.User.LastInteractionAnyChannel.Equal(later) {
		t.Errorf("agent message must not move any-channel: %v", st.User.LastInteractionAnyChannel)
	}
}

func TestClockStore_NoCrossChannelWhenDisabled(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	if err := cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "t", UserKey: "u", At: clockT0}); err != nil {
		t.Fatal(err)
	}
	st, _ := cs.LoadClockState(ctx, "u", "t")
	if !st.User.LastInteractionAnyChannel.IsZero() {
		t.Errorf("any channel recorded with AnyChannel=false: %v", st.User.LastInteractionAnyChannel)
	}
}

func TestClockStore_SaveClockStatePatch(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	kind, tz, home, mode := "project", "Asia/Tokyo", "Europe/Berlin", "normal"
	if err := cs.SaveClockState(ctx, "u", "t", kairos.ClockPatch{ThreadKind: &kind, SessionTZ: &tz, DefaultTZ: &home, Mode: &mode}); err != nil {
		t.Fatal(err)
	}
	st, _ := cs.LoadClockState(ctx, "u", "t")
	if st.Thread.Kind != kind || st.Thread.SessionTZ != tz || st.User.DefaultTZ != home || st.User.Mode != mode {
		t.Fatalf("state = %+v %+v", st.Thread, st.User)
	}
	empty := ""
	if err := cs.SaveClockState(ctx, "u", "t", kairos.ClockPatch{SessionTZ: &empty}); err != nil {
		t.Fatal(err)
	}
	st, _ = cs.LoadClockState(ctx, "u", "t")
	if st.Thread.SessionTZ != "" || st.Thread.Kind != kind {
		t.Errorf("clearing tz: %+v", st.Thread)
	}
}

func TestClockStore_ActionsCapAndExpiry(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	for i := 0; i < 5; i++ {
		at := clockT0.Add(time.Duration(i) * time.Minute)
		a := &kairos.ClockAction{ID: fmt.Sprintf("act_%d", i), UserKey: "u", ThreadKey: "t", Label: fmt.Sprintf("A%d", i),
			Type: "temporal_action", Status: kairos.ActionPlanned, Source: kairos.ActionSourceAuto,
			RecordedAt: at, ExpiresAt: at.Add(24 * time.Hour)}
		if err := cs.AddClockAction(ctx, a, 3); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := cs.LoadClockState(ctx, "u", "t")
	var ids []string
	for _, a := range st.Actions {
		ids = append(ids, a.ID)
	}
	if diff := cmp.Diff([]string{"act_4", "act_3", "act_2"}, ids); diff != "" {
		t.Fatalf("cap kept (-want +got):\n%s", diff)
	}
	// A day and a bit later every old action has expired.
	late := clockT0.Add(25 * time.Hour)
	if err := cs.AddClockAction(ctx, &kairos.ClockAction{ID: "act_new", UserKey: "u", Label: "New", Status: kairos.ActionPlanned,
		RecordedAt: late, ExpiresAt: late.Add(time.Hour)}, 25); err != nil {
		t.Fatal(err)
	}
	st, _ = cs.LoadClockState(ctx, "u", "t")
	for _, a := range st.Actions {
		if a.ID != "act_new" && a.Status != kairos.ActionExpired {
			t.Errorf("%s status %s, want expired", a.ID, a.Status)
		}
	}
	// Eight days later they are pruned.
	later := clockT0.Add(9 * 24 * time.Hour)
	if err := cs.AddClockAction(ctx, &kairos.ClockAction{ID: "act_z", UserKey: "u", Label: "Z", Status: kairos.ActionPlanned,
		RecordedAt: later, ExpiresAt: later.Add(time.Hour)}, 25); err != nil {
		t.Fatal(err)
	}
	st, _ = cs.LoadClockState(ctx, "u", "t")
	if len(st.Actions) != 1 || st.Actions[0].ID != "act_z" {
		t.Errorf("after pruning: %d actions", len(st.Actions))
	}
	if err := cs.AddClockAction(ctx, &kairos.ClockAction{ID: "act_z", UserKey: "u", Label: "Z", Status: kairos.ActionPlanned,
		RecordedAt: later, ExpiresAt: later.Add(time.Hour)}, 25); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Errorf("duplicate id: %v", err)
	}
}

func TestClockStore_SetActionStatus(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	a := &kairos.ClockAction{ID: "act_1", UserKey: "u", Label: "Gym", Status: kairos.ActionInProgress, RecordedAt: clockT0, ExpiresAt: clockT0.Add(time.Hour)}
	if err := cs.AddClockAction(ctx, a, 25); err != nil {
		t.Fatal(err)
	}
	if err := cs.SetClockActionStatus(ctx, "u", "act_1", kairos.ActionDone, clockT0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := cs.SetClockActionStatus(ctx, "other", "act_1", kairos.ActionDone, clockT0); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("other user's action: %v", err)
	}
	st, _ := cs.LoadClockState(ctx, "u", "")
	if st.Actions[0].Status != kairos.ActionDone {
		t.Errorf("status %s", st.Actions[0].Status)
	}
}

func TestClockStore_LinkSharesAnyChannel(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "a-dm", UserKey: "telegram:1", At: clockT0, AnyChannel: true}))
	must(cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "b-dm", UserKey: "cli:1", At: clockT0.Add(-time.Hour), AnyChannel: true}))
	must(cs.AddClockAction(ctx, &kairos.ClockAction{ID: "act_t", UserKey: "telegram:1", Label: "Gym", Status: kairos.ActionPlanned, RecordedAt: clockT0, ExpiresAt: clockT0.Add(time.Hour)}, 25))
	st, _ := cs.LoadClockState(ctx, "cli:1", "b-dm")
	if len(st.Linked) != 0 || len(st.Actions) != 0 {
		t.Fatalf("unlinked identities share state: %+v", st)
	}
	must(cs.LinkClockUsers(ctx, "cli:1", "telegram:1"))
	st, _ = cs.LoadClockState(ctx, "cli:1", "b-dm")
	if len(st.Linked) != 1 || st.Linked[0].UserKey != "telegram:1" {
		t.Fatalf("linked = %+v", st.Linked)
	}
	if !st.User.LastInteractionAnyChannel.Equal(clockT0) {
		t.Errorf("any channel after link = %v", st.User.LastInteractionAnyChannel)
	}
	if len(st.Actions) != 1 {
		t.Errorf("linked actions = %d", len(st.Actions))
	}
	later := clockT0.Add(time.Hour)
	must(cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "b-dm", UserKey: "cli:1", At: later, AnyChannel: true}))
	st, _ = cs.LoadClockState(ctx, "telegram:1", "a-dm")
	if !st.User.LastInteractionAnyChannel.Equal(later) {
		t.Errorf("shared any channel = %v, want %v", st.User.LastInteractionAnyChannel, later)
	}
	must(cs.UnlinkClockUser(ctx, "cli:1"))
	st, _ = cs.LoadClockState(ctx, "telegram:1", "a-dm")
	if len(st.Linked) != 0 || st.User.LinkGroup != "" {
		t.Errorf("after unlink: %+v", st.User)
	}
	if err := cs.LinkClockUsers(ctx, "x", "x"); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("self link: %v", err)
	}
}

func TestClockStore_GroupParticipants(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	const g = "agent:main:telegram:group:-100"
	berlin, ny := "Europe/Berlin", "America/New_York"
	cs.SaveClockState(ctx, "telegram:1", "", kairos.ClockPatch{DefaultTZ: &berlin})
	cs.SaveClockState(ctx, "telegram:2", "", kairos.ClockPatch{DefaultTZ: &ny})
	cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: g, UserKey: "telegram:1", At: clockT0})
	cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: g, UserKey: "telegram:2", At: clockT0.Add(time.Minute)})
	st, err := cs.LoadClockState(ctx, "telegram:1", g)
	if err != nil {
		t.Fatal(err)
	}
	want := []kairos.ClockParticipant{
		{UserKey: "telegram:1", DefaultTZ: berlin, LastUserMessage: clockT0},
		{UserKey: "telegram:2", DefaultTZ: ny, LastUserMessage: clockT0.Add(time.Minute)},
	}
	if diff := cmp.Diff(want, st.Participants); diff != "" {
		t.Errorf("participants (-want +got):\n%s", diff)
	}
}

func TestClockStore_ExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := store.NewClockStore(storetest.MustOpenDB(t))
	tokyo, kind, mode := "Asia/Tokyo", "project", "normal"
	src.SaveClockState(ctx, "telegram:1", "t1", kairos.ClockPatch{DefaultTZ: &tokyo, ThreadKind: &kind, SessionTZ: &tokyo, Mode: &mode})
	src.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "t1", UserKey: "telegram:1", At: clockT0, AnyChannel: true})
	src.RecordAgentMessage(ctx, kairos.ClockMark{ThreadKey: "t1", UserKey: "telegram:1", At: clockT0.Add(5 * time.Second)})
	src.AddClockAction(ctx, &kairos.ClockAction{ID: "act_1", UserKey: "telegram:1", ThreadKey: "t1", Label: "Eat dinner", Type: "temporal_action",
		Status: kairos.ActionPlanned, Source: kairos.ActionSourceAuto, Activity: "meal:dinner", RecordedAt: clockT0, ExpiresAt: clockT0.Add(24 * time.Hour),
		ExpectedTypicalMinutes: 75, ExpectedMaxMinutes: 180}, 25)
	src.SetClockCalibration(ctx, "telegram:1", "meal:dinner", kairos.ActivityCalibration{TypicalMinutes: 90, MaxMinutes: 240, UpdatedAt: clockT0})
	snap, err := src.ExportClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dst := store.NewClockStore(storetest.MustOpenDB(t))
	if err := dst.ImportClock(ctx, snap); err != nil {
		t.Fatal(err)
	}
	again, err := dst.ExportClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snap, again); diff != "" {
		t.Errorf("round trip (-src +dst):\n%s", diff)
	}
	if len(snap.Users) != 1 || len(snap.Threads) != 1 || len(snap.Actions) != 1 {
		t.Errorf("snapshot sizes: %d users %d threads %d actions", len(snap.Users), len(snap.Threads), len(snap.Actions))
	}
}

// TestClockStore_Hammer writes one thread from many goroutines; the marks
// must end at the maximum and no write may fail (§10.3 atomic updates).
func TestClockStore_Hammer(t *testing.T) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(t))
	const workers, each = 8, 20
	testkit.Hammer(t, workers, func(w int) error {
		for i := 0; i < each; i++ {
			at := clockT0.Add(time.Duration(w*each+i) * time.Second)
			u := fmt.Sprintf("telegram:%d", w%3)
			if err := cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: "g", UserKey: u, At: at, AnyChannel: true}); err != nil {
				return err
			}
			if err := cs.AddClockAction(ctx, &kairos.ClockAction{ID: fmt.Sprintf("act_%d_%d", w, i), UserKey: u, ThreadKey: "g",
				Label: "x", Status: kairos.ActionPlanned, RecordedAt: at, ExpiresAt: at.Add(time.Hour)}, 5); err != nil {
				return err
			}
		}
		return nil
	})
	max := clockT0.Add(time.Duration(workers*each-1) * time.Second)
	st, err := cs.LoadClockState(ctx, "telegram:0", "g")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Thread.LastInteraction.Equal(max) {
		t.Errorf("last interaction = %v, want %v", st.Thread.LastInteraction, max)
	}
	if len(st.Actions) > 5 {
		t.Errorf("cap exceeded: %d actions", len(st.Actions))
	}
	if len(st.Participants) != 3 {
		t.Errorf("participants = %d", len(st.Participants))
	}
}
