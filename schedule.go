package kairos

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"strconv"
	"strings"
	"time"
)

// Kinds of schedule.
const (
	ScheduleReminder = "reminder" // a text sent back at its time
	ScheduleTask     = "task"     // a prompt the agent runs at its time
	ScheduleCell     = "cell"     // a watching code cell; notifies only when it says so
)

// KindLabel names a schedule's kind in words for the user ("reminder",
// "task", "watching cell").
func KindLabel(kind string) string {
	if kind == ScheduleCell {
		return "watching cell"
	}
	return kind
}

// States of a schedule.
const (
	ScheduleActive    = "active"
	ScheduleDone      = "done" // a one-off that fired, or a recurrence that ended
	ScheduleCancelled = "cancelled"
)

// States of a firing.
const (
	FiringPending = "pending" // claimed from its schedule, not yet delivered
	FiringSent    = "sent"
	FiringMissed  = "missed" // older than the late threshold when it was found
	FiringFailed  = "failed" // gave up after repeated delivery failures
)

// Schedule is a reminder, task or watching cell that acts at a time.
type Schedule struct {
	ID int64 // the row's own id; never shown (sequential, guessable)
	// Ref is the id users, the model and buttons see: 128 random bits
	// (NewScheduleRef). Rows stored before it have none and keep their
	// numeric id as their public one.
	Ref       string
	UserID    int64
	ChatID    int64
	ThreadKey string
	Kind      string // ScheduleReminder, ScheduleTask or ScheduleCell
	Text      string // what the reminder says (or a label for a task/cell)
	Task      string // the prompt of a task
	Code      string // the source of a watching cell
	TZ        string // IANA zone the wall-clock times are kept in
	// RRule is the normalized RFC 5545 recurrence ("" for a one-off);
	// Repeat is what the user wrote.
	RRule  string
	Repeat string
	// Start is the first occurrence as wall-clock time in TZ
	// ("2006-01-02T15:04:05"); recurrences are expanded from it.
	Start   string
	NextRun time.Time // the next firing instant
	Status  string    // ScheduleActive, ScheduleDone or ScheduleCancelled
	// Tainted records that the creating turn had read untrusted content;
	// a task run later carries it into its own turn.
	Tainted bool
	// NetWrite records that a watching cell's create was approved as
	// code.network_write (not in a tainted turn): only then does it run
	// with the policy's write methods; otherwise GET/HEAD.
	NetWrite  bool
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64 // bumped by every change; claims compare it
}

// PublicID is the id a schedule is shown and addressed by.
func (s *Schedule) PublicID() string {
	if s.Ref != "" {
		return s.Ref
	}
	return strconv.FormatInt(s.ID, 10)
}

var refEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewScheduleRef returns a random schedule id: 128 bits in lower-case
// base32 (26 characters).
func NewScheduleRef() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return strings.ToLower(refEncoding.EncodeToString(b[:]))
}

// ScheduleScope is whose schedules a lookup may find: a user's own in
// one thread (ThreadKey) or one chat (ChatID); zero fields do not
// narrow.
type ScheduleScope struct {
	UserID    int64
	ThreadKey string
	ChatID    int64
}

// Firing is one occurrence of a schedule claimed for delivery: the
// outbox of the scheduler. It exists once per (schedule, due time).
type Firing struct {
	ID         int64
	ScheduleID int64
	DueAt      time.Time
	ClaimedAt  time.Time
	Status     string // FiringPending, FiringSent, FiringMissed or FiringFailed
	Skipped    int    // occurrences passed over while Kairos was down
	Attempts   int
	LeaseUntil time.Time
	SentAt     *time.Time
	MessageID  int64
	Detail     string
}

// ScheduleFilter selects schedules to list.
type ScheduleFilter struct {
	UserID    int64 // 0: every user
	ThreadKey string
	ChatID    int64  // 0: every chat
	Status    string // "" means ScheduleActive
	Limit     int    // <= 0: 1000
}

// Advance is what a claim does to a due schedule: its next run (zero
// with Status ScheduleDone when the schedule ends).
type Advance struct {
	NextRun time.Time
	Status  string
	Skipped int
	TZ      string // a new zone (schedules.travel follow_user); "" keeps it
	// RRule is the rule rewritten with the same occurrences (a COUNT
	// stored before COUNT became UNTIL at creation); "" keeps it.
	RRule string
}

// ScheduleStore keeps schedules and their firings.
type ScheduleStore interface {
	// CreateSchedule stores s and sets its ID, Ref (when empty), Version
	// and times. ECONFLICT when the user already has max active schedules
	// (max > 0; concurrent creates cannot pass it), or when s.Ref is
	// taken (a create keyed by a derived Ref happens once).
	CreateSchedule(ctx context.Context, s *Schedule, max int) error
	// Schedule returns one schedule by its row id (ENOTFOUND).
	Schedule(ctx context.Context, id int64) (*Schedule, error)
	// OwnSchedule returns the schedule whose public id is ref within
	// scope (ENOTFOUND, which says nothing of schedules out of scope).
	// A numeric ref finds only a row stored before refs existed.
	OwnSchedule(ctx context.Context, ref string, scope ScheduleScope) (*Schedule, error)
	// Schedules lists schedules by next run.
	Schedules(ctx context.Context, f ScheduleFilter) ([]*Schedule, error)
	// CancelSchedule cancels an active schedule of user (ENOTFOUND when
	// none; userID 0 matches any user).
	CancelSchedule(ctx context.Context, id, userID int64) error
	// Reschedule moves an active schedule's next run (skip) if it is
	// still active at version (ECONFLICT otherwise).
	Reschedule(ctx context.Context, id, version int64, next time.Time) error
	// DueSchedules returns up to limit active schedules due at now,
	// earliest first.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]*Schedule, error)
	// ClaimFiring advances s (compared by s.Version) as adv says and
	// records the firing of s.NextRun in the same transaction. It returns
	// nil, nil when another claimer got there first.
	ClaimFiring(ctx context.Context, s *Schedule, adv Advance, now time.Time) (*Firing, error)
	// LeaseFirings takes up to limit pending firings whose lease ran out,
	// leasing each until now+lease; every firing goes to one caller at a time.
	LeaseFirings(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Firing, error)
	// FinishFiring records a firing's outcome (FiringSent, FiringMissed or
	// FiringFailed) with the message id and a detail.
	FinishFiring(ctx context.Context, id int64, status string, messageID int64, detail string, at time.Time) error
	// Firings lists the firings of one schedule, newest first.
	Firings(ctx context.Context, scheduleID int64) ([]*Firing, error)
}
