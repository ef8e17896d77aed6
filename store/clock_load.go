package store

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// clockStateQuery reads a turn's clock state in one statement (one read
// of one snapshot; it was six): the user and the identities linked to it
// (part 0), the thread (1), the rows of the thread's participants and of
// the user's channels with each one's default zone (2), the actions of
// the user, the linked identities and the thread's group (3), and the
// user's calibration (4). Every part fills the same columns: nine texts
// s1…s9 and five integers n1…n5, empty and 0 where a part has fewer.
// The actions are sorted here (an ORDER BY over the compound made SQLite
// sort every part, ten times the cost of the reads), and the zones of
// the participants come from a subquery rather than a join (a LEFT JOIN
// in the compound cost as much again). The empty link group is no group:
// NULLIF keeps the index from visiting every unlinked user.
//
// Arguments: user, user; thread; thread; user, thread; user, the
// thread's group actions key, user; user.
const clockStateQuery = `SELECT 0 AS part, user_key AS s1, default_tz AS s2, mode AS s3, link_group AS s4, '' AS s5, '' AS s6, '' AS s7, '' AS s8, '' AS s9,
		last_interaction_any_channel AS n1, 0 AS n2, 0 AS n3, 0 AS n4, 0 AS n5
	FROM clock_users WHERE user_key = ? OR (link_group <> '' AND link_group = (SELECT NULLIF(link_group, '') FROM clock_users WHERE user_key = ?))
UNION ALL
	SELECT 1, thread_key, thread_kind, session_tz, '', '', '', '', '', '', last_interaction, last_user_message, last_agent_message, 0, 0
	FROM clock_threads WHERE thread_key = ?
UNION ALL
	SELECT 2, thread_key, user_key, COALESCE((SELECT default_tz FROM clock_users AS cu WHERE cu.user_key = tu.user_key), ''), '', '', '', '', '', '',
		last_user_message, last_agent_message, 0, 0, 0
	FROM clock_thread_users AS tu WHERE thread_key = ?
UNION ALL
	SELECT 2, thread_key, user_key, '', '', '', '', '', '', '', last_user_message, last_agent_message, 0, 0, 0
	FROM clock_thread_users WHERE user_key = ? AND thread_key <> ?
UNION ALL
	SELECT 3, id, user_key, thread_key, label, type, status, source, activity, quote, recorded_at, expires_at, updated_at, expected_typical_minutes, expected_max_minutes
	FROM clock_actions WHERE user_key IN (?, ?)
		OR user_key IN (SELECT user_key FROM clock_users WHERE link_group <> '' AND link_group = (SELECT NULLIF(link_group, '') FROM clock_users WHERE user_key = ?))
UNION ALL
	SELECT 4, activity, '', '', '', '', '', '', '', '', typical_minutes, max_minutes, updated_at, 0, 0
	FROM clock_calibration WHERE user_key = ?`

// clockStateRow is one row of clockStateQuery.
type clockStateRow struct {
	part int
	s    [9]string
	n    [5]int64
}

// LoadClockState implements kairos.ClockStore: the user (and identities
// linked to it), the thread and its participants, the actions and the
// calibration, read by clockStateQuery.
func (s *ClockStore) LoadClockState(ctx context.Context, userKey, threadKey string) (*kairos.ClockState, error) {
	rows, err := s.clockStateRows(ctx, userKey, threadKey)
	if err != nil {
		return nil, fmt.Errorf("load clock state: %w", err)
	}
	st := &kairos.ClockState{
		User:   kairos.UserClock{UserKey: userKey},
		Thread: kairos.ThreadClock{ThreadKey: threadKey},
	}
	var tus []clockThreadUserRow
	tz := map[string]string{} // a participant's default zone
	for _, r := range rows {
		switch r.part {
		case 0:
			u := clockUserFromRow(clockUserRow{UserKey: r.s[0], DefaultTZ: r.s[1], Mode: r.s[2], LinkGroup: r.s[3], LastInteractionAnyChannel: r.n[0]})
			if u.UserKey == userKey {
				st.User = u
			} else {
				st.Linked = append(st.Linked, u)
			}
		case 1:
			st.Thread = clockThreadFromRow(clockThreadRow{ThreadKey: r.s[0], ThreadKind: r.s[1], SessionTZ: r.s[2],
				LastInteraction: r.n[0], LastUserMessage: r.n[1], LastAgentMessage: r.n[2]})
		case 2:
			tus = append(tus, clockThreadUserRow{ThreadKey: r.s[0], UserKey: r.s[1], LastUserMessage: r.n[0], LastAgentMessage: r.n[1]})
			tz[r.s[1]] = r.s[2]
		case 3:
			st.Actions = append(st.Actions, clockActionFromRow(clockActionRow{ID: r.s[0], UserKey: r.s[1], ThreadKey: r.s[2], Label: r.s[3],
				Type: r.s[4], Status: r.s[5], Source: r.s[6], Activity: r.s[7], Quote: r.s[8], RecordedAt: r.n[0], ExpiresAt: r.n[1],
				UpdatedAt: r.n[2], ExpectedTypicalMinutes: int(r.n[3]), ExpectedMaxMinutes: int(r.n[4])}))
		case 4:
			if st.User.Calibration == nil {
				st.User.Calibration = map[string]kairos.ActivityCalibration{}
			}
			st.User.Calibration[r.s[0]] = kairos.ActivityCalibration{TypicalMinutes: int(r.n[0]), MaxMinutes: int(r.n[1]), UpdatedAt: clockTime(r.n[2])}
		}
	}
	sort.Slice(st.Linked, func(i, j int) bool { return st.Linked[i].UserKey < st.Linked[j].UserKey })
	// Newest first; ties by id, bytewise (as SQLite and a C-collated
	// PostgreSQL ordered them).
	slices.SortFunc(st.Actions, func(a, b *kairos.ClockAction) int {
		if c := b.RecordedAt.Compare(a.RecordedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	clockParticipants(st, tus, tz, userKey, threadKey)
	return st, nil
}

// clockStateRows runs clockStateQuery.
func (s *ClockStore) clockStateRows(ctx context.Context, userKey, threadKey string) ([]clockStateRow, error) {
	st, err := s.db.stmt(ctx, clockStateQuery)
	if err != nil {
		return nil, err
	}
	rs, err := st.QueryContext(ctx, userKey, userKey, threadKey, threadKey, userKey, threadKey,
		userKey, kairos.GroupActionsKey(threadKey), userKey, userKey)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []clockStateRow
	for rs.Next() {
		var r clockStateRow
		if err := rs.Scan(&r.part, &r.s[0], &r.s[1], &r.s[2], &r.s[3], &r.s[4], &r.s[5], &r.s[6], &r.s[7], &r.s[8],
			&r.n[0], &r.n[1], &r.n[2], &r.n[3], &r.n[4]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// clockParticipants puts the user's channels, and the thread's
// participants with their last messages and default zones, into st.
func clockParticipants(st *kairos.ClockState, tus []clockThreadUserRow, tz map[string]string, userKey, threadKey string) {
	for _, r := range tus {
		if r.UserKey == userKey {
			if st.User.Channels == nil {
				st.User.Channels = map[string]kairos.ChannelClock{}
			}
			st.User.Channels[r.ThreadKey] = kairos.ChannelClock{LastUserMessage: clockTime(r.LastUserMessage), LastAgentMessage: clockTime(r.LastAgentMessage)}
		}
		if r.ThreadKey != threadKey || r.LastUserMessage == 0 {
			continue
		}
		if st.Thread.LastUserMessageByUser == nil {
			st.Thread.LastUserMessageByUser = map[string]time.Time{}
		}
		st.Thread.LastUserMessageByUser[r.UserKey] = clockTime(r.LastUserMessage)
		p := kairos.ClockParticipant{UserKey: r.UserKey, LastUserMessage: clockTime(r.LastUserMessage), DefaultTZ: tz[r.UserKey]}
		if r.UserKey == userKey {
			p.DefaultTZ = st.User.DefaultTZ
		}
		st.Participants = append(st.Participants, p)
	}
	sort.Slice(st.Participants, func(i, j int) bool { return st.Participants[i].UserKey < st.Participants[j].UserKey })
}

func clockUserFromRow(r clockUserRow) kairos.UserClock {
	return kairos.UserClock{
		UserKey:                   r.UserKey,
		DefaultTZ:                 r.DefaultTZ,
		Mode:                      r.Mode,
		LinkGroup:                 r.LinkGroup,
		LastInteractionAnyChannel: clockTime(r.LastInteractionAnyChannel),
	}
}

func clockThreadFromRow(r clockThreadRow) kairos.ThreadClock {
	return kairos.ThreadClock{
		ThreadKey:        r.ThreadKey,
		Kind:             r.ThreadKind,
		SessionTZ:        r.SessionTZ,
		LastInteraction:  clockTime(r.LastInteraction),
		LastUserMessage:  clockTime(r.LastUserMessage),
		LastAgentMessage: clockTime(r.LastAgentMessage),
	}
}
