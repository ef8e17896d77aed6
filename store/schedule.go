package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ScheduleStore implements kairos.ScheduleStore.
type ScheduleStore struct{ db *DB }

var _ kairos.ScheduleStore = (*ScheduleStore)(nil)

// NewScheduleStore returns the schedule repository of db.
func NewScheduleStore(db *DB) *ScheduleStore { return &ScheduleStore{db: db} }

type scheduleRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	Ref        *string
	UserID     int64
	ChatID     int64
	ThreadKey  string
	Kind       string
	Text       string
	Task       string
	Code       string
	TZ         string `gorm:"column:tz"`
	RRule      string `gorm:"column:rrule"`
	RepeatText string
	StartLocal string
	NextRun    int64
	Status     string
	Tainted    int
	NetWrite   int
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
	UpdatedAt  int64 `gorm:"autoUpdateTime:false"`
	Version    int64
}

func (scheduleRow) TableName() string { return "schedules" }

type firingRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	ScheduleID int64
	DueAt      int64
	ClaimedAt  int64
	Status     string
	Skipped    int
	Attempts   int
	LeaseUntil int64
	SentAt     *int64
	MessageID  int64
	Detail     string
}

func (firingRow) TableName() string { return "schedule_firings" }

func (r *scheduleRow) schedule() *kairos.Schedule {
	ref := ""
	if r.Ref != nil {
		ref = *r.Ref
	}
	return &kairos.Schedule{ID: r.ID, Ref: ref, UserID: r.UserID, ChatID: r.ChatID, ThreadKey: r.ThreadKey, Kind: r.Kind,
		Text: r.Text, Task: r.Task, Code: r.Code, TZ: r.TZ, RRule: r.RRule, Repeat: r.RepeatText, Start: r.StartLocal,
		NextRun: fromMS(r.NextRun), Status: r.Status, Tainted: r.Tainted != 0, NetWrite: r.NetWrite != 0, CreatedAt: fromMS(r.CreatedAt),
		UpdatedAt: fromMS(r.UpdatedAt), Version: r.Version}
}

func (r *firingRow) firing() *kairos.Firing {
	return &kairos.Firing{ID: r.ID, ScheduleID: r.ScheduleID, DueAt: fromMS(r.DueAt), ClaimedAt: fromMS(r.ClaimedAt),
		Status: r.Status, Skipped: r.Skipped, Attempts: r.Attempts, LeaseUntil: fromMS(r.LeaseUntil),
		SentAt: fromMSP(r.SentAt), MessageID: r.MessageID, Detail: r.Detail}
}

// CreateSchedule stores s; with max > 0 it refuses (ECONFLICT) a user's
// schedule beyond max active ones.
func (s *ScheduleStore) CreateSchedule(ctx context.Context, sc *kairos.Schedule, max int) error {
	if sc == nil || sc.UserID == 0 || sc.ThreadKey == "" || sc.TZ == "" || sc.NextRun.IsZero() {
		return kairos.Errorf(kairos.EINVALID, "a schedule needs its user, thread, zone and next run")
	}
	switch sc.Kind {
	case kairos.ScheduleReminder, kairos.ScheduleTask, kairos.ScheduleCell:
	default:
		return kairos.Errorf(kairos.EINVALID, "unknown schedule kind %q", sc.Kind)
	}
	now := ms(s.db.Now())
	if sc.Ref == "" {
		sc.Ref = kairos.NewScheduleRef()
	}
	ref := sc.Ref
	row := scheduleRow{Ref: &ref, UserID: sc.UserID, ChatID: sc.ChatID, ThreadKey: sc.ThreadKey, Kind: sc.Kind,
		Text: cleanText(sc.Text), Task: cleanText(sc.Task), Code: cleanText(sc.Code), TZ: sc.TZ, RRule: sc.RRule,
		RepeatText: cleanText(sc.Repeat), StartLocal: sc.Start, NextRun: ms(sc.NextRun), Status: kairos.ScheduleActive,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	if sc.Tainted {
		row.Tainted = 1
	}
	if sc.NetWrite && !sc.Tainted && sc.Kind == kairos.ScheduleCell {
		row.NetWrite = 1
	}
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if max > 0 && s.db.dialect == DialectPostgres {
			// Count and insert under the user's lock: READ COMMITTED would
			// let two concurrent creates both see room for one. (SQLite's
			// transactions are BEGIN IMMEDIATE: writers are serialised.)
			k1, k2 := int32(0x6b736371), int32(uint32(uint64(sc.UserID)>>32)^uint32(uint64(sc.UserID)))
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?, ?)", k1, k2).Error; err != nil {
				return err
			}
		}
		if max > 0 {
			var n int64
			if err := tx.Model(&scheduleRow{}).Where("user_id = ? AND status = ?", sc.UserID, kairos.ScheduleActive).Count(&n).Error; err != nil {
				return err
			}
			if n >= int64(max) {
				return kairos.Errorf(kairos.ECONFLICT, "you already have %d schedules, the most allowed; cancel one first", n)
			}
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error == nil && res.RowsAffected == 0 {
			return kairos.Errorf(kairos.ECONFLICT, "a schedule with that id exists already")
		}
		return res.Error
	})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.ECONFLICT {
			return err
		}
		return fmt.Errorf("create schedule: %w", err)
	}
	sc.ID, sc.Version, sc.Status = row.ID, row.Version, row.Status
	sc.CreatedAt, sc.UpdatedAt = fromMS(now), fromMS(now)
	return nil
}

// Schedule returns one schedule.
func (s *ScheduleStore) Schedule(ctx context.Context, id int64) (*kairos.Schedule, error) {
	var row scheduleRow
	err := s.db.gdb.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "schedule %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find schedule: %w", err)
	}
	return row.schedule(), nil
}

// OwnSchedule returns the schedule ref within scope.
func (s *ScheduleStore) OwnSchedule(ctx context.Context, ref string, sc kairos.ScheduleScope) (*kairos.Schedule, error) {
	notFound := kairos.Errorf(kairos.ENOTFOUND, "You have no schedule %q here.", kairos.Clip(ref, 40))
	if ref == "" || sc.UserID == 0 {
		return nil, notFound
	}
	q := s.db.gdb.WithContext(ctx).Where("user_id = ?", sc.UserID)
	if sc.ThreadKey != "" {
		q = q.Where("thread_key = ?", sc.ThreadKey)
	}
	if sc.ChatID != 0 {
		q = q.Where("chat_id = ?", sc.ChatID)
	}
	return takeByRef(q, ref, notFound)
}

// ScheduleByRef returns the schedule whose public id is ref, whoever
// owns it (operators' console; ENOTFOUND).
func (s *ScheduleStore) ScheduleByRef(ctx context.Context, ref string) (*kairos.Schedule, error) {
	return takeByRef(s.db.gdb.WithContext(ctx), ref, kairos.Errorf(kairos.ENOTFOUND, "No schedule has the id %q.", kairos.Clip(ref, 40)))
}

// takeByRef takes the schedule of q whose public id is ref: a number is
// the id of a schedule from before refs, anything else a ref. None is
// notFound.
func takeByRef(q *gorm.DB, ref string, notFound error) (*kairos.Schedule, error) {
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil {
		q = q.Where("ref IS NULL AND id = ?", n)
	} else {
		q = q.Where("ref = ?", ref)
	}
	var row scheduleRow
	err := q.Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("find schedule: %w", err)
	}
	return row.schedule(), nil
}

// Schedules lists schedules by next run.
func (s *ScheduleStore) Schedules(ctx context.Context, f kairos.ScheduleFilter) ([]*kairos.Schedule, error) {
	status := f.Status
	if status == "" {
		status = kairos.ScheduleActive
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	q := s.db.gdb.WithContext(ctx).Where("status = ?", status)
	if f.UserID != 0 {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.ThreadKey != "" {
		q = q.Where("thread_key = ?", f.ThreadKey)
	}
	if f.ChatID != 0 {
		q = q.Where("chat_id = ?", f.ChatID)
	}
	var rows []scheduleRow
	if err := q.Order("next_run, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	out := make([]*kairos.Schedule, len(rows))
	for i := range rows {
		out[i] = rows[i].schedule()
	}
	return out, nil
}

// CancelSchedule cancels an active schedule.
func (s *ScheduleStore) CancelSchedule(ctx context.Context, id, userID int64) error {
	q := s.db.gdb.WithContext(ctx).Model(&scheduleRow{}).Where("id = ? AND status = ?", id, kairos.ScheduleActive)
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	res := q.Updates(map[string]any{"status": kairos.ScheduleCancelled, "updated_at": ms(s.db.Now()), "version": gorm.Expr("version + 1")})
	if res.Error != nil {
		return fmt.Errorf("cancel schedule: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "no active schedule %d", id)
	}
	return nil
}

// Reschedule moves an active schedule's next run; a cancelled or done
// one stays so.
func (s *ScheduleStore) Reschedule(ctx context.Context, id, version int64, next time.Time) error {
	res := s.db.gdb.WithContext(ctx).Model(&scheduleRow{}).Where("id = ? AND version = ? AND status = ?", id, version, kairos.ScheduleActive).
		Updates(map[string]any{"next_run": ms(next), "status": kairos.ScheduleActive, "updated_at": ms(s.db.Now()), "version": gorm.Expr("version + 1")})
	if res.Error != nil {
		return fmt.Errorf("reschedule: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ECONFLICT, "schedule %d changed meanwhile", id)
	}
	return nil
}

// DueSchedules returns active schedules due at now, earliest first.
func (s *ScheduleStore) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*kairos.Schedule, error) {
	return s.DueSchedulesIn(ctx, now, limit, Scope{})
}

// Scope limits due schedules and leased firings to some threads: one
// thread (Thread), or all but one channel's (NotChannel). `kairos chat`
// runs its own terminal thread's, `kairos run` every other's; limiting in
// the query keeps one's due schedules from filling the other's batch.
type Scope struct{ Thread, NotChannel string }

// on limits q by the thread key in column col.
func (sc Scope) on(q *gorm.DB, col string) *gorm.DB {
	if sc.Thread != "" {
		q = q.Where(col+" = ?", sc.Thread)
	}
	if sc.NotChannel != "" {
		q = q.Where(col+" NOT LIKE ?", "%:"+sc.NotChannel+":%")
	}
	return q
}

// DueSchedulesIn is DueSchedules within scope.
func (s *ScheduleStore) DueSchedulesIn(ctx context.Context, now time.Time, limit int, scope Scope) ([]*kairos.Schedule, error) {
	if limit <= 0 {
		limit = 100
	}
	var rows []scheduleRow
	q := s.db.gdb.WithContext(ctx).Where("status = ? AND next_run <= ?", kairos.ScheduleActive, ms(now))
	err := scope.on(q, "thread_key").Order("next_run, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	out := make([]*kairos.Schedule, len(rows))
	for i := range rows {
		out[i] = rows[i].schedule()
	}
	return out, nil
}

// ClaimFiring advances the schedule by a conditional update on its
// version and inserts the firing in the same transaction.
func (s *ScheduleStore) ClaimFiring(ctx context.Context, sc *kairos.Schedule, adv kairos.Advance, now time.Time) (*kairos.Firing, error) {
	status := adv.Status
	if status == "" {
		status = kairos.ScheduleActive
	}
	next := ms(sc.NextRun)
	if !adv.NextRun.IsZero() {
		next = ms(adv.NextRun)
	}
	var f *firingRow
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		set := map[string]any{"next_run": next, "status": status, "updated_at": ms(now), "version": gorm.Expr("version + 1")}
		if adv.TZ != "" {
			set["tz"] = adv.TZ
		}
		if adv.RRule != "" {
			set["rrule"] = adv.RRule
		}
		res := tx.Model(&scheduleRow{}).Where("id = ? AND version = ? AND status = ?", sc.ID, sc.Version, kairos.ScheduleActive).Updates(set)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return nil // someone else claimed it, or it changed
		}
		row := firingRow{ScheduleID: sc.ID, DueAt: ms(sc.NextRun), ClaimedAt: ms(now), Status: kairos.FiringPending, Skipped: adv.Skipped}
		ins := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if ins.Error != nil {
			return ins.Error
		}
		if ins.RowsAffected == 1 {
			f = &row
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim firing: %w", err)
	}
	if f == nil {
		return nil, nil
	}
	sc.Version++
	sc.Status = status
	if adv.TZ != "" {
		sc.TZ = adv.TZ
	}
	if adv.RRule != "" {
		sc.RRule = adv.RRule
	}
	sc.NextRun = fromMS(next)
	return f.firing(), nil
}

// LeaseFirings leases pending firings whose lease ran out, one
// conditional update each, so that concurrent callers never share one.
func (s *ScheduleStore) LeaseFirings(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*kairos.Firing, error) {
	return s.LeaseFiringsIn(ctx, now, lease, limit, Scope{})
}

// LeaseFiringsIn is LeaseFirings within scope.
func (s *ScheduleStore) LeaseFiringsIn(ctx context.Context, now time.Time, lease time.Duration, limit int, scope Scope) ([]*kairos.Firing, error) {
	if limit <= 0 {
		limit = 100
	}
	var rows []firingRow
	g := s.db.gdb.WithContext(ctx)
	q := g.Where("schedule_firings.status = ? AND schedule_firings.lease_until <= ?", kairos.FiringPending, ms(now))
	if scope != (Scope{}) {
		q = scope.on(q.Joins("JOIN schedules ON schedules.id = schedule_firings.schedule_id"), "schedules.thread_key")
	}
	if err := q.Order("schedule_firings.due_at, schedule_firings.id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("pending firings: %w", err)
	}
	var out []*kairos.Firing
	until := ms(now.Add(lease))
	for i := range rows {
		r := &rows[i]
		res := g.Model(&firingRow{}).Where("id = ? AND status = ? AND lease_until = ?", r.ID, kairos.FiringPending, r.LeaseUntil).
			Updates(map[string]any{"lease_until": until, "attempts": gorm.Expr("attempts + 1")})
		if res.Error != nil {
			return out, fmt.Errorf("lease firing: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			r.LeaseUntil = until
			r.Attempts++
			out = append(out, r.firing())
		}
	}
	return out, nil
}

// FinishFiring records a firing's outcome.
func (s *ScheduleStore) FinishFiring(ctx context.Context, id int64, status string, messageID int64, detail string, at time.Time) error {
	switch status {
	case kairos.FiringSent, kairos.FiringMissed, kairos.FiringFailed:
	default:
		return kairos.Errorf(kairos.EINVALID, "unknown firing outcome %q", status)
	}
	t := ms(at)
	res := s.db.gdb.WithContext(ctx).Model(&firingRow{}).Where("id = ?", id).
		Updates(map[string]any{"status": status, "message_id": messageID, "detail": cleanText(detail), "sent_at": &t})
	if res.Error != nil {
		return fmt.Errorf("finish firing: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "firing %d not found", id)
	}
	return nil
}

// Firings lists a schedule's firings, newest first.
func (s *ScheduleStore) Firings(ctx context.Context, scheduleID int64) ([]*kairos.Firing, error) {
	var rows []firingRow
	if err := s.db.gdb.WithContext(ctx).Where("schedule_id = ?", scheduleID).Order("due_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list firings: %w", err)
	}
	out := make([]*kairos.Firing, len(rows))
	for i := range rows {
		out[i] = rows[i].firing()
	}
	return out, nil
}
