package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"gorm.io/gorm"
)

// TestClockStateOneQueryAgrees: the clock state read in one statement is
// the state the six separate reads gave (refClockState, the loader as it
// was), over generated databases: linked identities, group threads with
// participants who have or lack a user row, the user's other channels,
// actions of the user, of linked identities, of the group and of
// strangers, with tied times, and calibrations.
func TestClockStateOneQueryAgrees(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	cs := store.NewClockStore(db)
	g := db.Gorm()
	r := rand.New(rand.NewPCG(36, 1))
	users := []string{"telegram:1", "telegram:2", "telegram:3", "telegram:4", "api:1", "api:2"}
	threads := []string{"agent:main:telegram:dm:1", "agent:main:telegram:dm:2", "agent:main:telegram:group:-5", "agent:main:telegram:group:-6", "agent:main:api:dm:1"}
	zones := []string{"", "Europe/Paris", "Asia/Tokyo"}
	exec := func(q string, args ...any) {
		t.Helper()
		if err := g.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	for round := range 8 {
		for _, table := range []string{"clock_users", "clock_threads", "clock_thread_users", "clock_actions", "clock_calibration"} {
			exec("DELETE FROM " + table)
		}
		for _, u := range users {
			if r.IntN(5) == 0 {
				continue // no user row (a participant known only by its messages)
			}
			link := []string{"", "", "g1", "g2"}[r.IntN(4)]
			exec(`INSERT INTO clock_users (user_key, default_tz, mode, link_group, last_interaction_any_channel) VALUES (?, ?, ?, ?, ?)`,
				u, zones[r.IntN(3)], []string{"", "on", "off"}[r.IntN(3)], link, r.Int64N(3)*1000)
			for _, act := range []string{"workout", "meeting"} {
				if r.IntN(2) == 0 {
					exec(`INSERT INTO clock_calibration (user_key, activity, typical_minutes, max_minutes, updated_at) VALUES (?, ?, ?, ?, ?)`,
						u, act, r.IntN(90), 90+r.IntN(90), r.Int64N(5000))
				}
			}
		}
		for _, th := range threads {
			if r.IntN(4) > 0 {
				exec(`INSERT INTO clock_threads (thread_key, thread_kind, session_tz, last_interaction, last_user_message, last_agent_message) VALUES (?, ?, ?, ?, ?, ?)`,
					th, []string{"", "dm", "group"}[r.IntN(3)], zones[r.IntN(3)], r.Int64N(9000), r.Int64N(9000), r.Int64N(9000))
			}
			for _, u := range users {
				if r.IntN(3) == 0 {
					exec(`INSERT INTO clock_thread_users (thread_key, user_key, last_user_message, last_agent_message) VALUES (?, ?, ?, ?)`,
						th, u, r.Int64N(3)*777, r.Int64N(3)*555)
				}
			}
		}
		owners := append(slices.Clone(users), kairos.GroupActionsKey(threads[2]), kairos.GroupActionsKey(threads[3]), "telegram:99")
		for i := range 30 {
			exec(`INSERT INTO clock_actions (id, user_key, thread_key, label, type, status, source, activity, quote, recorded_at, expires_at, updated_at, expected_typical_minutes, expected_max_minutes)
				VALUES (?, ?, ?, ?, 'temporal_action', ?, 'auto', ?, ?, ?, ?, ?, ?, ?)`,
				fmt.Sprintf("a%02d-%d", r.IntN(40), i), owners[r.IntN(len(owners))], threads[r.IntN(len(threads))], fmt.Sprintf("label %d", i),
				[]string{"open", "done"}[r.IntN(2)], []string{"", "workout"}[r.IntN(2)], "q", r.Int64N(4)*1000, 99999, r.Int64N(100), r.IntN(60), r.IntN(120))
		}
		for _, u := range append(slices.Clone(users), "telegram:77") {
			for _, th := range threads {
				got, err := cs.LoadClockState(ctx, u, th)
				if err != nil {
					t.Fatal(err)
				}
				want, err := refClockState(g.WithContext(ctx), u, th)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("round %d, %s in %s: (-six reads +one query)\n%s", round, u, th, diff)
				}
			}
		}
	}
}

// refClockState is LoadClockState as six separate reads (before issue 36).
func refClockState(db *gorm.DB, userKey, threadKey string) (*kairos.ClockState, error) {
	st := &kairos.ClockState{User: kairos.UserClock{UserKey: userKey}, Thread: kairos.ThreadClock{ThreadKey: threadKey}}
	type userRow struct {
		UserKey, DefaultTZ, Mode, LinkGroup string
		LastInteractionAnyChannel           int64
	}
	ms := func(v int64) time.Time {
		if v == 0 {
			return time.Time{}
		}
		return time.UnixMilli(v).UTC()
	}
	var users []userRow
	if err := db.Raw(`SELECT user_key, default_tz AS default_tz, mode, link_group, last_interaction_any_channel FROM clock_users
		WHERE user_key = ? OR (link_group <> '' AND link_group = (SELECT link_group FROM clock_users WHERE user_key = ?))`, userKey, userKey).Scan(&users).Error; err != nil {
		return nil, err
	}
	groupKeys := []string{userKey}
	for _, r := range users {
		u := kairos.UserClock{UserKey: r.UserKey, DefaultTZ: r.DefaultTZ, Mode: r.Mode, LinkGroup: r.LinkGroup, LastInteractionAnyChannel: ms(r.LastInteractionAnyChannel)}
		if r.UserKey == userKey {
			st.User = u
		} else {
			st.Linked = append(st.Linked, u)
			groupKeys = append(groupKeys, r.UserKey)
		}
	}
	sort.Slice(st.Linked, func(i, j int) bool { return st.Linked[i].UserKey < st.Linked[j].UserKey })
	var threads []struct {
		ThreadKey, ThreadKind, SessionTZ                   string
		LastInteraction, LastUserMessage, LastAgentMessage int64
	}
	if err := db.Raw(`SELECT thread_key, thread_kind, session_tz AS session_tz, last_interaction, last_user_message, last_agent_message
		FROM clock_threads WHERE thread_key = ?`, threadKey).Scan(&threads).Error; err != nil {
		return nil, err
	}
	if len(threads) == 1 {
		r := threads[0]
		st.Thread = kairos.ThreadClock{ThreadKey: r.ThreadKey, Kind: r.ThreadKind, SessionTZ: r.SessionTZ, LastInteraction: ms(r.LastInteraction),
			LastUserMessage: ms(r.LastUserMessage), LastAgentMessage: ms(r.LastAgentMessage)}
	}
	return refClockRest(db, st, groupKeys, userKey, threadKey, ms)
}

// refClockRest is the participants, actions and calibration part of
// refClockState.
func refClockRest(db *gorm.DB, st *kairos.ClockState, groupKeys []string, userKey, threadKey string, ms func(int64) time.Time) (*kairos.ClockState, error) {
	var tus []struct {
		ThreadKey, UserKey                string
		LastUserMessage, LastAgentMessage int64
	}
	if err := db.Raw(`SELECT thread_key, user_key, last_user_message, last_agent_message FROM clock_thread_users
		WHERE thread_key = ? OR user_key = ?`, threadKey, userKey).Scan(&tus).Error; err != nil {
		return nil, err
	}
	var others []string
	for _, r := range tus {
		if r.UserKey == userKey {
			if st.User.Channels == nil {
				st.User.Channels = map[string]kairos.ChannelClock{}
			}
			st.User.Channels[r.ThreadKey] = kairos.ChannelClock{LastUserMessage: ms(r.LastUserMessage), LastAgentMessage: ms(r.LastAgentMessage)}
		}
		if r.ThreadKey != threadKey || r.LastUserMessage == 0 {
			continue
		}
		if st.Thread.LastUserMessageByUser == nil {
			st.Thread.LastUserMessageByUser = map[string]time.Time{}
		}
		st.Thread.LastUserMessageByUser[r.UserKey] = ms(r.LastUserMessage)
		p := kairos.ClockParticipant{UserKey: r.UserKey, LastUserMessage: ms(r.LastUserMessage)}
		if r.UserKey == userKey {
			p.DefaultTZ = st.User.DefaultTZ
		} else {
			others = append(others, r.UserKey)
		}
		st.Participants = append(st.Participants, p)
	}
	if len(others) > 0 {
		var prow []struct{ UserKey, DefaultTZ string }
		if err := db.Raw(`SELECT user_key, default_tz AS default_tz FROM clock_users WHERE user_key IN ?`, others).Scan(&prow).Error; err != nil {
			return nil, err
		}
		tz := map[string]string{}
		for _, r := range prow {
			tz[r.UserKey] = r.DefaultTZ
		}
		for i := range st.Participants {
			if st.Participants[i].UserKey != userKey {
				st.Participants[i].DefaultTZ = tz[st.Participants[i].UserKey]
			}
		}
	}
	sort.Slice(st.Participants, func(i, j int) bool { return st.Participants[i].UserKey < st.Participants[j].UserKey })
	var acts []struct {
		ID, UserKey, ThreadKey, Label, Type, Status, Source, Activity, Quote string
		RecordedAt, ExpiresAt, UpdatedAt                                     int64
		ExpectedTypicalMinutes, ExpectedMaxMinutes                           int
	}
	keys := append(slices.Clone(groupKeys), kairos.GroupActionsKey(threadKey))
	if err := db.Raw(`SELECT * FROM clock_actions WHERE user_key IN ? ORDER BY recorded_at DESC, id DESC`, keys).Scan(&acts).Error; err != nil {
		return nil, err
	}
	for _, r := range acts {
		st.Actions = append(st.Actions, &kairos.ClockAction{ID: r.ID, UserKey: r.UserKey, ThreadKey: r.ThreadKey, Label: r.Label, Type: r.Type,
			Status: r.Status, Source: r.Source, Activity: r.Activity, Quote: r.Quote, RecordedAt: ms(r.RecordedAt), ExpiresAt: ms(r.ExpiresAt),
			UpdatedAt: ms(r.UpdatedAt), ExpectedTypicalMinutes: r.ExpectedTypicalMinutes, ExpectedMaxMinutes: r.ExpectedMaxMinutes})
	}
	var cals []struct {
		Activity                   string
		TypicalMinutes, MaxMinutes int
		UpdatedAt                  int64
	}
	if err := db.Raw(`SELECT activity, typical_minutes, max_minutes, updated_at FROM clock_calibration WHERE user_key = ?`, userKey).Scan(&cals).Error; err != nil {
		return nil, err
	}
	for _, r := range cals {
		if st.User.Calibration == nil {
			st.User.Calibration = map[string]kairos.ActivityCalibration{}
		}
		st.User.Calibration[r.Activity] = kairos.ActivityCalibration{TypicalMinutes: r.TypicalMinutes, MaxMinutes: r.MaxMinutes, UpdatedAt: ms(r.UpdatedAt)}
	}
	return st, nil
}

// BenchmarkClockTurn is a turn's clock work among 1,000 users with no
// linked identity (the load benchmark's flood): the user's mark
// (RecordUserMessage) and the state (LoadClockState). With the empty
// link group compared as a value, each visited every unlinked user.
func BenchmarkClockTurn(b *testing.B) {
	ctx := context.Background()
	cs := store.NewClockStore(storetest.MustOpenDB(b))
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	keys := func(i int) (string, string) {
		return fmt.Sprintf("agent:main:telegram:dm:%d", i%1000), fmt.Sprintf("telegram:%d", i%1000)
	}
	for i := range 1000 {
		th, u := keys(i)
		if err := cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: th, UserKey: u, At: at, AnyChannel: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("mark", func(b *testing.B) {
		for i := range b.N {
			th, u := keys(i)
			if err := cs.RecordUserMessage(ctx, kairos.ClockMark{ThreadKey: th, UserKey: u, At: at.Add(time.Duration(i) * time.Second), AnyChannel: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load", func(b *testing.B) {
		for i := range b.N {
			th, u := keys(i)
			if _, err := cs.LoadClockState(ctx, u, th); err != nil {
				b.Fatal(err)
			}
		}
	})
}
