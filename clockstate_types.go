package kairos

import (
	"context"
	"time"
)

// Thread kinds (CLOCK.md §5.2). An unknown kind reads as conversation.
const (
	ThreadKindProject      = "project"
	ThreadKindConversation = "conversation"
	ThreadKindScheduling   = "scheduling"
	ThreadKindOperations   = "operations"
)

// ThreadKinds lists the allowed thread kinds.
var ThreadKinds = []string{ThreadKindProject, ThreadKindConversation, ThreadKindScheduling, ThreadKindOperations}

// Clock modes (CLOCK.md §0, clock.mode and policy_overrides.mode).
const (
	ClockModeOff    = "off"
	ClockModeLight  = "light"
	ClockModeNormal = "normal"
)

// Statuses of a clocked action (CLOCK.md §6.3).
const (
	ActionPlanned    = "planned"
	ActionInProgress = "in_progress"
	ActionLikelyDone = "likely_done"
	ActionDone       = "done"
	ActionCanceled   = "canceled"
	ActionExpired    = "expired"
)

// Sources of a clocked action (CLOCK.md §10.2).
const (
	ActionSourceAuto          = "auto"
	ActionSourceClockIt       = "clock_it"
	ActionSourceUserConfirmed = "user_confirmed"
)

// UserClock is the clock state of one channel-scoped user (CLOCK.md §10.2
// users.<user_id>). Zero times mean "never".
type UserClock struct {
	UserKey   string
	DefaultTZ string // the user's home timezone (IANA), "" when unknown
	Mode      string // policy_overrides.mode: off, light, normal or "" (policy)
	// LinkGroup joins identities the user linked across channels (§7.0);
	// "" when the user is not linked.
	LinkGroup                 string
	LastInteractionAnyChannel time.Time
	// Channels holds the user's last messages per thread key.
	Channels    map[string]ChannelClock
	Calibration map[string]ActivityCalibration // by activity, e.g. meal:dinner
}

// ChannelClock is users.<u>.channels.<channel_key> of §10.2; Kairos keys it
// by thread key, so it is the user's last messages per thread.
type ChannelClock struct {
	LastUserMessage  time.Time
	LastAgentMessage time.Time
}

// ActivityCalibration is one per-user duration calibration (§6.3, §10.2).
type ActivityCalibration struct {
	TypicalMinutes int
	MaxMinutes     int
	UpdatedAt      time.Time
}

// ThreadClock is the clock state of one thread (CLOCK.md §10.2 threads).
type ThreadClock struct {
	ThreadKey        string
	Kind             string // "" reads as conversation
	SessionTZ        string // the thread's stored Session TZ override, "" when none
	LastInteraction  time.Time
	LastUserMessage  time.Time
	LastAgentMessage time.Time
	// LastUserMessageByUser holds every participant's last message.
	LastUserMessageByUser map[string]time.Time
}

// ClockParticipant is a participant of a thread with what is known of them.
type ClockParticipant struct {
	UserKey         string
	DefaultTZ       string
	LastUserMessage time.Time
}

// ClockAction is one clocked action of Latest actions (CLOCK.md §6).
type ClockAction struct {
	ID        string // act_…
	UserKey   string
	ThreadKey string
	Label     string // normalized short summary
	Type      string // temporal_action or event
	Status    string // Action* constants
	Source    string // ActionSource* constants
	Activity  string // calibration key such as exercise:gym; may be ""
	Quote     string // short excerpt, only when store_quotes is true

	RecordedAt time.Time
	ExpiresAt  time.Time
	UpdatedAt  time.Time

	ExpectedTypicalMinutes int
	ExpectedMaxMinutes     int
}

// ClockState is what load_clock_state returns for a user in a thread.
type ClockState struct {
	User   UserClock
	Linked []UserClock // the other identities linked to User (§7.0)
	Thread ThreadClock
	// Participants of the thread (group chats: per-user timezones, §7.3).
	Participants []ClockParticipant
	// Actions of the user and their linked identities, newest first.
	Actions []*ClockAction
}

// ClockPatch is save_clock_state's patch: nil fields are left alone, a
// pointer to "" clears the setting.
type ClockPatch struct {
	ThreadKind *string
	SessionTZ  *string // thread override
	DefaultTZ  *string // user default
	Mode       *string // user policy_overrides.mode
}

// ClockMark is one interaction to record.
type ClockMark struct {
	ThreadKey string
	UserKey   string
	At        time.Time
	// AnyChannel also raises the user's (and linked identities')
	// last_interaction_any_channel (cross_channel_tracking).
	AnyChannel bool
}

// ClockSnapshot is the whole clock state, for export and import.
type ClockSnapshot struct {
	Users   []UserClock
	Threads []ThreadClock
	Actions []*ClockAction
}

// ClockStore persists clock state (CLOCK.md §10). Every write is atomic;
// timestamps only move forward (an older mark never lowers a newer one).
type ClockStore interface {
	// LoadClockState returns the state of userKey in threadKey; unknown
	// users and threads come back empty, not as errors.
	LoadClockState(ctx context.Context, userKey, threadKey string) (*ClockState, error)
	// SaveClockState applies a settings patch (EINVALID for a bad value is
	// the caller's job).
	SaveClockState(ctx context.Context, userKey, threadKey string, p ClockPatch) error
	// RecordUserMessage raises the thread's last_user_message and
	// last_interaction, the user's last message in the thread, and with
	// AnyChannel the user's last_interaction_any_channel.
	RecordUserMessage(ctx context.Context, m ClockMark) error
	// RecordAgentMessage raises the thread's last_agent_message and
	// last_interaction (and the related user's last agent message there).
	RecordAgentMessage(ctx context.Context, m ClockMark) error
	// AddClockAction stores a new action, then compacts the user's list at
	// a.RecordedAt: expired actions are marked and pruned, and at most
	// maxItems remain (newest kept).
	AddClockAction(ctx context.Context, a *ClockAction, maxItems int) error
	// SetClockActionStatus changes an action's status (ENOTFOUND).
	SetClockActionStatus(ctx context.Context, userKey, id, status string, at time.Time) error
	// SetClockCalibration stores a per-user activity calibration.
	SetClockCalibration(ctx context.Context, userKey, activity string, c ActivityCalibration) error
	// LinkClockUsers joins two identities (and their groups) into one link
	// group; their last_interaction_any_channel becomes the group's latest.
	LinkClockUsers(ctx context.Context, a, b string) error
	// UnlinkClockUser takes a user out of their link group.
	UnlinkClockUser(ctx context.Context, userKey string) error
	// PutLinkCode records a pending identity-link code of userKey made at
	// `at`, valid until expires; it drops the codes expired at `at` and the
	// user's earlier code.
	PutLinkCode(ctx context.Context, code, userKey string, at, expires time.Time) error
	// LinkCodeUser returns the user of a code still valid at `at`
	// (ENOTFOUND otherwise).
	LinkCodeUser(ctx context.Context, code string, at time.Time) (string, error)
	// DeleteLinkCode removes a code (used or refused).
	DeleteLinkCode(ctx context.Context, code string) error
	// ExportClock returns the whole state.
	ExportClock(ctx context.Context) (*ClockSnapshot, error)
	// ImportClock upserts the snapshot's rows in one transaction (rows not
	// in the snapshot are kept).
	ImportClock(ctx context.Context, s *ClockSnapshot) error
}

// GroupActionsKey is the owner of a group thread's group-relevant clocked
// actions (CLOCK.md §7.3: latest actions are per user unless explicitly
// clocked for the group); every participant of the thread sees them.
func GroupActionsKey(threadKey string) string { return "group-actions:" + threadKey }
