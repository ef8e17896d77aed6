package store

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

// LoadClockState implements kairos.ClockStore: the user (and identities
// linked to it), the thread and its participants, the actions and the
// calibration, each read by one step below.
func (s *ClockStore) LoadClockState(ctx context.Context, userKey, threadKey string) (*kairos.ClockState, error) {
	st := &kairos.ClockState{
		User:   kairos.UserClock{UserKey: userKey},
		Thread: kairos.ThreadClock{ThreadKey: threadKey},
	}
	db := s.gdb(ctx)
	groupKeys, err := loadClockUsers(db, st, userKey)
	if err != nil {
		return nil, err
	}
	var threads []clockThreadRow
	if err := db.Raw(`SELECT thread_key, thread_kind, session_tz, last_interaction, last_user_message, last_agent_message
		FROM clock_threads WHERE thread_key = ?`, threadKey).Scan(&threads).Error; err != nil {
		return nil, fmt.Errorf("load clock thread: %w", err)
	}
	if len(threads) == 1 {
		st.Thread = clockThreadFromRow(threads[0])
	}
	if err := loadClockParticipants(db, st, userKey, threadKey); err != nil {
		return nil, err
	}
	var acts []clockActionRow
	// The user's (and linked identities') actions, and the thread's
	// group-relevant ones (§7.3).
	actionKeys := append(slices.Clone(groupKeys), kairos.GroupActionsKey(threadKey))
	if err := db.Raw(`SELECT * FROM clock_actions WHERE user_key IN ? ORDER BY recorded_at DESC, id DESC`, actionKeys).
		Scan(&acts).Error; err != nil {
		return nil, fmt.Errorf("load clock actions: %w", err)
	}
	for _, r := range acts {
		st.Actions = append(st.Actions, clockActionFromRow(r))
	}
	if err := loadClockCalibration(db, st, userKey); err != nil {
		return nil, err
	}
	return st, nil
}

// loadClockUsers reads the user and the identities linked to it into st,
// and returns the keys of them all (the user's first).
func loadClockUsers(db *gorm.DB, st *kairos.ClockState, userKey string) ([]string, error) {
	var users []clockUserRow
	if err := db.Raw(`SELECT user_key, default_tz, mode, link_group, last_interaction_any_channel FROM clock_users
		WHERE user_key = ? OR (link_group <> '' AND link_group = (SELECT link_group FROM clock_users WHERE user_key = ?))`,
		userKey, userKey).Scan(&users).Error; err != nil {
		return nil, fmt.Errorf("load clock user: %w", err)
	}
	groupKeys := []string{userKey}
	for _, r := range users {
		if r.UserKey == userKey {
			st.User = clockUserFromRow(r)
		} else {
			st.Linked = append(st.Linked, clockUserFromRow(r))
			groupKeys = append(groupKeys, r.UserKey)
		}
	}
	sort.Slice(st.Linked, func(i, j int) bool { return st.Linked[i].UserKey < st.Linked[j].UserKey })
	return groupKeys, nil
}

// loadClockParticipants reads the user's channels, and the thread's
// participants with their last messages and default zones, into st.
func loadClockParticipants(db *gorm.DB, st *kairos.ClockState, userKey, threadKey string) error {
	var tus []clockThreadUserRow
	if err := db.Raw(`SELECT thread_key, user_key, last_user_message, last_agent_message FROM clock_thread_users
		WHERE thread_key = ? OR user_key = ?`, threadKey, userKey).Scan(&tus).Error; err != nil {
		return fmt.Errorf("load clock thread users: %w", err)
	}
	var others []string
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
		p := kairos.ClockParticipant{UserKey: r.UserKey, LastUserMessage: clockTime(r.LastUserMessage)}
		if r.UserKey == userKey {
			p.DefaultTZ = st.User.DefaultTZ
		} else {
			others = append(others, r.UserKey)
		}
		st.Participants = append(st.Participants, p)
	}
	if len(others) > 0 {
		var prow []clockUserRow
		if err := db.Raw(`SELECT user_key, default_tz FROM clock_users WHERE user_key IN ?`, others).Scan(&prow).Error; err != nil {
			return fmt.Errorf("load clock participants: %w", err)
		}
		tz := make(map[string]string, len(prow))
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
	return nil
}

// loadClockCalibration reads the user's activity calibration into st.
func loadClockCalibration(db *gorm.DB, st *kairos.ClockState, userKey string) error {
	var cals []clockCalibrationRow
	if err := db.Raw(`SELECT * FROM clock_calibration WHERE user_key = ?`, userKey).Scan(&cals).Error; err != nil {
		return fmt.Errorf("load clock calibration: %w", err)
	}
	for _, r := range cals {
		if st.User.Calibration == nil {
			st.User.Calibration = map[string]kairos.ActivityCalibration{}
		}
		st.User.Calibration[r.Activity] = kairos.ActivityCalibration{TypicalMinutes: r.TypicalMinutes, MaxMinutes: r.MaxMinutes, UpdatedAt: clockTime(r.UpdatedAt)}
	}
	return nil
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
