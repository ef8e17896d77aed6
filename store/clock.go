package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

// ClockStore keeps the clock state of CLOCK.md §10 in the database.
//
// Timestamps are unix milliseconds with 0 for "never". Every recorded
// timestamp is raised monotonically inside the upsert itself (CASE WHEN
// new > old), so concurrent writers never lower one another's marks and no
// read-modify-write is needed; multi-row changes run in one transaction.
type ClockStore struct {
	db *DB
	g  *gorm.DB // with prepared statements: the per-turn queries are few and hot
}

// NewClockStore returns the clock store of db.
func NewClockStore(db *DB) *ClockStore {
	return &ClockStore{db: db, g: db.gdb.Session(&gorm.Session{PrepareStmt: true})}
}

var _ kairos.ClockStore = (*ClockStore)(nil)

// clockOpenStatuses are the statuses that still count as open.
var clockOpenStatuses = []string{kairos.ActionPlanned, kairos.ActionInProgress, kairos.ActionLikelyDone}

// clockExpiredRetention is how long an expired action stays visible (as
// status expired) before compaction deletes it.
const clockExpiredRetention = 7 * 24 * time.Hour

type clockUserRow struct {
	UserKey                   string `gorm:"column:user_key"`
	DefaultTZ                 string `gorm:"column:default_tz"`
	Mode                      string `gorm:"column:mode"`
	LinkGroup                 string `gorm:"column:link_group"`
	LastInteractionAnyChannel int64  `gorm:"column:last_interaction_any_channel"`
}

type clockThreadRow struct {
	ThreadKey        string `gorm:"column:thread_key"`
	ThreadKind       string `gorm:"column:thread_kind"`
	SessionTZ        string `gorm:"column:session_tz"`
	LastInteraction  int64  `gorm:"column:last_interaction"`
	LastUserMessage  int64  `gorm:"column:last_user_message"`
	LastAgentMessage int64  `gorm:"column:last_agent_message"`
}

type clockThreadUserRow struct {
	ThreadKey        string `gorm:"column:thread_key"`
	UserKey          string `gorm:"column:user_key"`
	LastUserMessage  int64  `gorm:"column:last_user_message"`
	LastAgentMessage int64  `gorm:"column:last_agent_message"`
}

type clockActionRow struct {
	ID                     string `gorm:"column:id"`
	UserKey                string `gorm:"column:user_key"`
	ThreadKey              string `gorm:"column:thread_key"`
	Label                  string `gorm:"column:label"`
	Type                   string `gorm:"column:type"`
	Status                 string `gorm:"column:status"`
	Source                 string `gorm:"column:source"`
	Activity               string `gorm:"column:activity"`
	Quote                  string `gorm:"column:quote"`
	RecordedAt             int64  `gorm:"column:recorded_at"`
	ExpiresAt              int64  `gorm:"column:expires_at"`
	UpdatedAt              int64  `gorm:"column:updated_at"`
	ExpectedTypicalMinutes int    `gorm:"column:expected_typical_minutes"`
	ExpectedMaxMinutes     int    `gorm:"column:expected_max_minutes"`
}

type clockCalibrationRow struct {
	UserKey        string `gorm:"column:user_key"`
	Activity       string `gorm:"column:activity"`
	TypicalMinutes int    `gorm:"column:typical_minutes"`
	MaxMinutes     int    `gorm:"column:max_minutes"`
	UpdatedAt      int64  `gorm:"column:updated_at"`
}

// cms converts a time to stored milliseconds, the zero time to 0.
func clockMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// ctime converts stored milliseconds to a UTC time, 0 to the zero time.
func clockTime(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// raise is the SQL of a monotonic upsert assignment.
func clockRaise(table, col string) string {
	return col + " = CASE WHEN excluded." + col + " > " + table + "." + col +
		" THEN excluded." + col + " ELSE " + table + "." + col + " END"
}

func (s *ClockStore) gdb(ctx context.Context) *gorm.DB { return s.g.WithContext(ctx) }

// SessionZones returns a thread's Session TZ setting and the default zone
// of userKey ("" when unset), in one prepared query: what resolving the
// Session TZ needs, without the rest of the clock state (the session
// rollover asks on every turn).
func (s *ClockStore) SessionZones(ctx context.Context, userKey, threadKey string) (sessionTZ, defaultTZ string, err error) {
	err = s.db.queryRow(ctx, `SELECT COALESCE((SELECT session_tz FROM clock_threads WHERE thread_key = ?), ''),
		COALESCE((SELECT default_tz FROM clock_users WHERE user_key = ?), '')`, threadKey, userKey).Scan(&sessionTZ, &defaultTZ)
	if err != nil {
		return "", "", fmt.Errorf("load session zones: %w", err)
	}
	return sessionTZ, defaultTZ, nil
}

func clockActionFromRow(r clockActionRow) *kairos.ClockAction {
	return &kairos.ClockAction{
		ID: r.ID, UserKey: r.UserKey, ThreadKey: r.ThreadKey, Label: r.Label, Type: r.Type,
		Status: r.Status, Source: r.Source, Activity: r.Activity, Quote: r.Quote,
		RecordedAt: clockTime(r.RecordedAt), ExpiresAt: clockTime(r.ExpiresAt), UpdatedAt: clockTime(r.UpdatedAt),
		ExpectedTypicalMinutes: r.ExpectedTypicalMinutes, ExpectedMaxMinutes: r.ExpectedMaxMinutes,
	}
}

func clockRowFromAction(a *kairos.ClockAction) clockActionRow {
	return clockActionRow{
		ID: a.ID, UserKey: a.UserKey, ThreadKey: a.ThreadKey, Label: a.Label, Type: a.Type,
		Status: a.Status, Source: a.Source, Activity: a.Activity, Quote: a.Quote,
		RecordedAt: clockMS(a.RecordedAt), ExpiresAt: clockMS(a.ExpiresAt), UpdatedAt: clockMS(a.UpdatedAt),
		ExpectedTypicalMinutes: a.ExpectedTypicalMinutes, ExpectedMaxMinutes: a.ExpectedMaxMinutes,
	}
}

// ensureUser creates the user's row when missing.
func clockEnsureUser(tx *gorm.DB, userKey string) error {
	return tx.Exec(`INSERT INTO clock_users (user_key) VALUES (?) ON CONFLICT (user_key) DO NOTHING`, userKey).Error
}

// ensureThread creates the thread's row when missing.
func clockEnsureThread(tx *gorm.DB, threadKey string) error {
	return tx.Exec(`INSERT INTO clock_threads (thread_key) VALUES (?) ON CONFLICT (thread_key) DO NOTHING`, threadKey).Error
}

// SaveClockState implements kairos.ClockStore.
func (s *ClockStore) SaveClockState(ctx context.Context, userKey, threadKey string, p kairos.ClockPatch) error {
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		if p.ThreadKind != nil || p.SessionTZ != nil {
			if threadKey == "" {
				return kairos.Errorf(kairos.EINVALID, "no thread to change")
			}
			if err := clockEnsureThread(tx, threadKey); err != nil {
				return err
			}
			if p.ThreadKind != nil {
				if err := tx.Exec(`UPDATE clock_threads SET thread_kind = ? WHERE thread_key = ?`, *p.ThreadKind, threadKey).Error; err != nil {
					return err
				}
			}
			if p.SessionTZ != nil {
				if err := tx.Exec(`UPDATE clock_threads SET session_tz = ? WHERE thread_key = ?`, *p.SessionTZ, threadKey).Error; err != nil {
					return err
				}
			}
		}
		if p.DefaultTZ != nil || p.Mode != nil {
			if userKey == "" {
				return kairos.Errorf(kairos.EINVALID, "no user to change")
			}
			if err := clockEnsureUser(tx, userKey); err != nil {
				return err
			}
			if p.DefaultTZ != nil {
				if err := tx.Exec(`UPDATE clock_users SET default_tz = ? WHERE user_key = ?`, *p.DefaultTZ, userKey).Error; err != nil {
					return err
				}
			}
			if p.Mode != nil {
				if err := tx.Exec(`UPDATE clock_users SET mode = ? WHERE user_key = ?`, *p.Mode, userKey).Error; err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save clock state: %w", err)
	}
	return nil
}

// RecordUserMessage implements kairos.ClockStore.
func (s *ClockStore) RecordUserMessage(ctx context.Context, m kairos.ClockMark) error {
	at := clockMS(m.At)
	err := s.db.write(ctx, func(ctx context.Context, tx *hotTx) error {
		if _, err := tx.exec(ctx, `INSERT INTO clock_threads (thread_key, last_user_message, last_interaction) VALUES (?, ?, ?)
			ON CONFLICT (thread_key) DO UPDATE SET `+clockRaise("clock_threads", "last_user_message")+`, `+clockRaise("clock_threads", "last_interaction"),
			m.ThreadKey, at, at); err != nil {
			return err
		}
		if m.UserKey == "" {
			return nil
		}
		if _, err := tx.exec(ctx, `INSERT INTO clock_thread_users (thread_key, user_key, last_user_message) VALUES (?, ?, ?)
			ON CONFLICT (thread_key, user_key) DO UPDATE SET `+clockRaise("clock_thread_users", "last_user_message"),
			m.ThreadKey, m.UserKey, at); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `INSERT INTO clock_users (user_key) VALUES (?) ON CONFLICT (user_key) DO NOTHING`, m.UserKey); err != nil {
			return err
		}
		if !m.AnyChannel {
			return nil
		}
		// One statement raises the user and their linked identities
		// (§7.0), so concurrent linked writers cannot deadlock.
		_, err := tx.exec(ctx, `UPDATE clock_users SET last_interaction_any_channel = ?
			WHERE last_interaction_any_channel < ? AND (user_key = ? OR (link_group <> ''
			AND link_group = (SELECT NULLIF(g.link_group, '') FROM clock_users g WHERE g.user_key = ?)))`, at, at, m.UserKey, m.UserKey)
		return err
	})
	if err != nil {
		return fmt.Errorf("record user message: %w", err)
	}
	return nil
}

// RecordAgentMessage implements kairos.ClockStore.
func (s *ClockStore) RecordAgentMessage(ctx context.Context, m kairos.ClockMark) error {
	at := clockMS(m.At)
	err := s.db.write(ctx, func(ctx context.Context, tx *hotTx) error {
		if _, err := tx.exec(ctx, `INSERT INTO clock_threads (thread_key, last_agent_message, last_interaction) VALUES (?, ?, ?)
			ON CONFLICT (thread_key) DO UPDATE SET `+clockRaise("clock_threads", "last_agent_message")+`, `+clockRaise("clock_threads", "last_interaction"),
			m.ThreadKey, at, at); err != nil {
			return err
		}
		if m.UserKey == "" {
			return nil
		}
		_, err := tx.exec(ctx, `INSERT INTO clock_thread_users (thread_key, user_key, last_agent_message) VALUES (?, ?, ?)
			ON CONFLICT (thread_key, user_key) DO UPDATE SET `+clockRaise("clock_thread_users", "last_agent_message"),
			m.ThreadKey, m.UserKey, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("record agent message: %w", err)
	}
	return nil
}

// AddClockAction implements kairos.ClockStore.
func (s *ClockStore) AddClockAction(ctx context.Context, a *kairos.ClockAction, maxItems int) error {
	if a.ID == "" || a.UserKey == "" || a.Label == "" {
		return kairos.Errorf(kairos.EINVALID, "clock action needs an id, a user and a label")
	}
	row := clockRowFromAction(a)
	if row.UpdatedAt == 0 {
		row.UpdatedAt = row.RecordedAt
	}
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		if err := clockEnsureUser(tx, a.UserKey); err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO clock_actions (id, user_key, thread_key, label, type, status, source, activity, quote,
			recorded_at, expires_at, updated_at, expected_typical_minutes, expected_max_minutes)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			row.ID, row.UserKey, row.ThreadKey, row.Label, row.Type, row.Status, row.Source, row.Activity, row.Quote,
			row.RecordedAt, row.ExpiresAt, row.UpdatedAt, row.ExpectedTypicalMinutes, row.ExpectedMaxMinutes).Error; err != nil {
			if clockUniqueViolation(err) {
				return kairos.Errorf(kairos.ECONFLICT, "clocked action %s exists", row.ID)
			}
			return err
		}
		return compactClockActions(tx, a.UserKey, clockMS(a.RecordedAt), maxItems)
	})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.ECONFLICT {
			return err
		}
		return fmt.Errorf("add clock action: %w", err)
	}
	return nil
}

// compactActions applies §10.3's compaction to one user's actions at now:
// open actions past their window become likely_done, past their expiry
// become expired; long-expired ones are deleted; the newest maxItems stay.
func compactClockActions(tx *gorm.DB, userKey string, now int64, maxItems int) error {
	if err := tx.Exec(`UPDATE clock_actions SET status = ?, updated_at = ?
		WHERE user_key = ? AND status IN ? AND expires_at <= ?`,
		kairos.ActionExpired, now, userKey, clockOpenStatuses, now).Error; err != nil {
		return err
	}
	if err := tx.Exec(`UPDATE clock_actions SET status = ?, updated_at = ?
		WHERE user_key = ? AND status IN ? AND expected_max_minutes > 0
		AND recorded_at + expected_max_minutes * CAST(60000 AS BIGINT) <= ?`,
		kairos.ActionLikelyDone, now, userKey, []string{kairos.ActionPlanned, kairos.ActionInProgress}, now).Error; err != nil {
		return err
	}
	if err := tx.Exec(`DELETE FROM clock_actions WHERE user_key = ? AND expires_at <= ?`,
		userKey, now-clockExpiredRetention.Milliseconds()).Error; err != nil {
		return err
	}
	if maxItems <= 0 {
		return nil
	}
	return tx.Exec(`DELETE FROM clock_actions WHERE user_key = ? AND id NOT IN
		(SELECT id FROM clock_actions WHERE user_key = ? ORDER BY recorded_at DESC, id DESC LIMIT ?)`,
		userKey, userKey, maxItems).Error
}

// SetClockActionStatus implements kairos.ClockStore.
func (s *ClockStore) SetClockActionStatus(ctx context.Context, userKey, id, status string, at time.Time) error {
	res := s.gdb(ctx).Exec(`UPDATE clock_actions SET status = ?, updated_at = ? WHERE id = ? AND user_key = ?`,
		status, clockMS(at), id, userKey)
	if res.Error != nil {
		return fmt.Errorf("set clock action status: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "No such clocked action.")
	}
	return nil
}

// SetClockCalibration implements kairos.ClockStore.
func (s *ClockStore) SetClockCalibration(ctx context.Context, userKey, activity string, c kairos.ActivityCalibration) error {
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		if err := clockEnsureUser(tx, userKey); err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO clock_calibration (user_key, activity, typical_minutes, max_minutes, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_key, activity) DO UPDATE SET typical_minutes = excluded.typical_minutes,
			max_minutes = excluded.max_minutes, updated_at = excluded.updated_at`,
			userKey, activity, c.TypicalMinutes, c.MaxMinutes, clockMS(c.UpdatedAt)).Error
	})
	if err != nil {
		return fmt.Errorf("set clock calibration: %w", err)
	}
	return nil
}

// PutLinkCode implements kairos.ClockStore.
func (s *ClockStore) PutLinkCode(ctx context.Context, code, userKey string, at, expires time.Time) error {
	if code == "" || userKey == "" {
		return kairos.Errorf(kairos.EINVALID, "a link code needs its code and user")
	}
	return s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM clock_link_codes WHERE expires_at <= ? OR user_key = ?`, ms(at), userKey).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO clock_link_codes (code, user_key, expires_at) VALUES (?, ?, ?)`, code, userKey, ms(expires)).Error
	})
}

// LinkCodeUser implements kairos.ClockStore.
func (s *ClockStore) LinkCodeUser(ctx context.Context, code string, at time.Time) (string, error) {
	var users []string
	if err := s.gdb(ctx).Raw(`SELECT user_key FROM clock_link_codes WHERE code = ? AND expires_at > ?`, code, ms(at)).Scan(&users).Error; err != nil {
		return "", err
	}
	if len(users) == 0 {
		return "", kairos.Errorf(kairos.ENOTFOUND, "Unknown or expired link code.")
	}
	return users[0], nil
}

// DeleteLinkCode implements kairos.ClockStore.
func (s *ClockStore) DeleteLinkCode(ctx context.Context, code string) error {
	return s.gdb(ctx).Exec(`DELETE FROM clock_link_codes WHERE code = ?`, code).Error
}

// LinkClockUsers implements kairos.ClockStore.
func (s *ClockStore) LinkClockUsers(ctx context.Context, a, b string) error {
	if a == "" || b == "" || a == b {
		return kairos.Errorf(kairos.EINVALID, "Linking needs two different identities.")
	}
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		for _, k := range []string{a, b} {
			if err := clockEnsureUser(tx, k); err != nil {
				return err
			}
		}
		var rows []clockUserRow
		if err := tx.Raw(`SELECT user_key, link_group FROM clock_users WHERE user_key IN ?`, []string{a, b}).Scan(&rows).Error; err != nil {
			return err
		}
		groups := []string{a, b}
		for _, r := range rows {
			if r.LinkGroup != "" {
				groups = append(groups, r.LinkGroup)
			}
		}
		sort.Strings(groups)
		group := "link:" + groups[0]
		if err := tx.Exec(`UPDATE clock_users SET link_group = ?
			WHERE user_key IN ? OR (link_group <> '' AND link_group IN ?)`, group, []string{a, b}, groups).Error; err != nil {
			return err
		}
		var latest int64
		if err := tx.Raw(`SELECT COALESCE(MAX(last_interaction_any_channel), 0) FROM clock_users WHERE link_group = ?`, group).
			Scan(&latest).Error; err != nil {
			return err
		}
		return tx.Exec(`UPDATE clock_users SET last_interaction_any_channel = ? WHERE link_group = ?`, latest, group).Error
	})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINVALID {
			return err
		}
		return fmt.Errorf("link clock users: %w", err)
	}
	return nil
}

// UnlinkClockUser implements kairos.ClockStore.
func (s *ClockStore) UnlinkClockUser(ctx context.Context, userKey string) error {
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		var group string
		if err := tx.Raw(`SELECT link_group FROM clock_users WHERE user_key = ?`, userKey).Scan(&group).Error; err != nil {
			return err
		}
		if group == "" {
			return nil
		}
		if err := tx.Exec(`UPDATE clock_users SET link_group = '' WHERE user_key = ?`, userKey).Error; err != nil {
			return err
		}
		var left int64
		if err := tx.Raw(`SELECT COUNT(*) FROM clock_users WHERE link_group = ?`, group).Scan(&left).Error; err != nil {
			return err
		}
		if left < 2 {
			return tx.Exec(`UPDATE clock_users SET link_group = '' WHERE link_group = ?`, group).Error
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("unlink clock user: %w", err)
	}
	return nil
}

// ExportClock implements kairos.ClockStore.
func (s *ClockStore) ExportClock(ctx context.Context) (*kairos.ClockSnapshot, error) {
	db := s.gdb(ctx)
	var users []clockUserRow
	var threads []clockThreadRow
	var tus []clockThreadUserRow
	var acts []clockActionRow
	var cals []clockCalibrationRow
	for _, q := range []struct {
		sql  string
		dest any
	}{
		{`SELECT * FROM clock_users ORDER BY user_key`, &users},
		{`SELECT * FROM clock_threads ORDER BY thread_key`, &threads},
		{`SELECT * FROM clock_thread_users ORDER BY thread_key, user_key`, &tus},
		{`SELECT * FROM clock_actions ORDER BY user_key, recorded_at DESC, id DESC`, &acts},
		{`SELECT * FROM clock_calibration ORDER BY user_key, activity`, &cals},
	} {
		if err := db.Raw(q.sql).Scan(q.dest).Error; err != nil {
			return nil, fmt.Errorf("export clock: %w", err)
		}
	}
	snap := &kairos.ClockSnapshot{}
	uidx := map[string]int{}
	addUser := func(k string) int {
		if i, ok := uidx[k]; ok {
			return i
		}
		snap.Users = append(snap.Users, kairos.UserClock{UserKey: k})
		uidx[k] = len(snap.Users) - 1
		return uidx[k]
	}
	for _, r := range users {
		uidx[r.UserKey] = len(snap.Users)
		snap.Users = append(snap.Users, clockUserFromRow(r))
	}
	tidx := map[string]int{}
	for _, r := range threads {
		tidx[r.ThreadKey] = len(snap.Threads)
		snap.Threads = append(snap.Threads, clockThreadFromRow(r))
	}
	for _, r := range tus {
		u := &snap.Users[addUser(r.UserKey)]
		if u.Channels == nil {
			u.Channels = map[string]kairos.ChannelClock{}
		}
		u.Channels[r.ThreadKey] = kairos.ChannelClock{LastUserMessage: clockTime(r.LastUserMessage), LastAgentMessage: clockTime(r.LastAgentMessage)}
		i, ok := tidx[r.ThreadKey]
		if !ok {
			tidx[r.ThreadKey] = len(snap.Threads)
			snap.Threads = append(snap.Threads, kairos.ThreadClock{ThreadKey: r.ThreadKey})
			i = tidx[r.ThreadKey]
		}
		if r.LastUserMessage != 0 {
			t := &snap.Threads[i]
			if t.LastUserMessageByUser == nil {
				t.LastUserMessageByUser = map[string]time.Time{}
			}
			t.LastUserMessageByUser[r.UserKey] = clockTime(r.LastUserMessage)
		}
	}
	for _, r := range cals {
		u := &snap.Users[addUser(r.UserKey)]
		if u.Calibration == nil {
			u.Calibration = map[string]kairos.ActivityCalibration{}
		}
		u.Calibration[r.Activity] = kairos.ActivityCalibration{TypicalMinutes: r.TypicalMinutes, MaxMinutes: r.MaxMinutes, UpdatedAt: clockTime(r.UpdatedAt)}
	}
	for _, r := range acts {
		addUser(r.UserKey)
		snap.Actions = append(snap.Actions, clockActionFromRow(r))
	}
	return snap, nil
}

// ImportClock implements kairos.ClockStore.
func (s *ClockStore) ImportClock(ctx context.Context, snap *kairos.ClockSnapshot) error {
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		for _, u := range snap.Users {
			if u.UserKey == "" {
				return kairos.Errorf(kairos.EINVALID, "user without a key")
			}
			if err := tx.Exec(`INSERT INTO clock_users (user_key, default_tz, mode, link_group, last_interaction_any_channel) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (user_key) DO UPDATE SET default_tz = excluded.default_tz, mode = excluded.mode,
				link_group = excluded.link_group, last_interaction_any_channel = excluded.last_interaction_any_channel`,
				u.UserKey, u.DefaultTZ, u.Mode, u.LinkGroup, clockMS(u.LastInteractionAnyChannel)).Error; err != nil {
				return err
			}
			for tk, c := range u.Channels {
				if err := tx.Exec(`INSERT INTO clock_thread_users (thread_key, user_key, last_user_message, last_agent_message) VALUES (?, ?, ?, ?)
					ON CONFLICT (thread_key, user_key) DO UPDATE SET last_user_message = excluded.last_user_message,
					last_agent_message = excluded.last_agent_message`,
					tk, u.UserKey, clockMS(c.LastUserMessage), clockMS(c.LastAgentMessage)).Error; err != nil {
					return err
				}
			}
			for act, c := range u.Calibration {
				if err := tx.Exec(`INSERT INTO clock_calibration (user_key, activity, typical_minutes, max_minutes, updated_at) VALUES (?, ?, ?, ?, ?)
					ON CONFLICT (user_key, activity) DO UPDATE SET typical_minutes = excluded.typical_minutes,
					max_minutes = excluded.max_minutes, updated_at = excluded.updated_at`,
					u.UserKey, act, c.TypicalMinutes, c.MaxMinutes, clockMS(c.UpdatedAt)).Error; err != nil {
					return err
				}
			}
		}
		for _, t := range snap.Threads {
			if t.ThreadKey == "" {
				return kairos.Errorf(kairos.EINVALID, "thread without a key")
			}
			if err := tx.Exec(`INSERT INTO clock_threads (thread_key, thread_kind, session_tz, last_interaction, last_user_message, last_agent_message)
				VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (thread_key) DO UPDATE SET thread_kind = excluded.thread_kind, session_tz = excluded.session_tz,
				last_interaction = excluded.last_interaction, last_user_message = excluded.last_user_message,
				last_agent_message = excluded.last_agent_message`,
				t.ThreadKey, t.Kind, t.SessionTZ, clockMS(t.LastInteraction), clockMS(t.LastUserMessage), clockMS(t.LastAgentMessage)).Error; err != nil {
				return err
			}
			for uk, at := range t.LastUserMessageByUser {
				if err := tx.Exec(`INSERT INTO clock_thread_users (thread_key, user_key, last_user_message) VALUES (?, ?, ?)
					ON CONFLICT (thread_key, user_key) DO UPDATE SET `+clockRaise("clock_thread_users", "last_user_message"),
					t.ThreadKey, uk, clockMS(at)).Error; err != nil {
					return err
				}
			}
		}
		for _, a := range snap.Actions {
			if a.ID == "" || a.UserKey == "" {
				return kairos.Errorf(kairos.EINVALID, "action without an id or a user")
			}
			r := clockRowFromAction(a)
			if err := clockEnsureUser(tx, a.UserKey); err != nil {
				return err
			}
			if err := tx.Exec(`INSERT INTO clock_actions (id, user_key, thread_key, label, type, status, source, activity, quote,
				recorded_at, expires_at, updated_at, expected_typical_minutes, expected_max_minutes)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET user_key = excluded.user_key, thread_key = excluded.thread_key,
				label = excluded.label, type = excluded.type, status = excluded.status, source = excluded.source,
				activity = excluded.activity, quote = excluded.quote, recorded_at = excluded.recorded_at,
				expires_at = excluded.expires_at, updated_at = excluded.updated_at,
				expected_typical_minutes = excluded.expected_typical_minutes, expected_max_minutes = excluded.expected_max_minutes`,
				r.ID, r.UserKey, r.ThreadKey, r.Label, r.Type, r.Status, r.Source, r.Activity, r.Quote,
				r.RecordedAt, r.ExpiresAt, r.UpdatedAt, r.ExpectedTypicalMinutes, r.ExpectedMaxMinutes).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINVALID {
			return err
		}
		return fmt.Errorf("import clock: %w", err)
	}
	return nil
}

// clockUniqueViolation reports a primary-key or unique clash on either dialect.
func clockUniqueViolation(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unique constraint") || strings.Contains(msg, "duplicate key") || strings.Contains(msg, "sqlstate 23505")
}
