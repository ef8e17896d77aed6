package kairos

import (
	"context"
	"time"
)

// ClockEnvelope is what the interaction wrapper (clockstate) learned about
// a user message: who, which thread, what time it is there, how long since
// the last interaction, and what temporal awareness decided (CLOCK.md §4.5,
// §5). The agent puts Text into the system prompt verbatim.
type ClockEnvelope struct {
	UserKey   string
	ThreadKey string
	At        time.Time // the turn's instant (the message's own date)
	NowISO    string    // At in the Session TZ, ISO-8601 with offset
	SessionTZ string    // IANA name or "UTC"
	// Elapsed since the thread's last interaction as an ISO-8601 duration;
	// empty when this is the thread's first message.
	Elapsed           string
	ElapsedAnyChannel string
	ThreadKind        string
	Mode              string   // off, light, normal
	TemporalAwareness bool     // the per-prompt relevance decision
	CheckinActions    []string // ask_for_updates, offer_recap, allow_hedged_reference
	// Reply, when set, answers the message without the model (a directive
	// such as "clock: kind project" that needs no further work).
	Reply string
	// Text is the envelope rendered for the system prompt.
	Text string
}

// AgentMessage is an outbound agent message, for on_agent_message.
type AgentMessage struct {
	Channel   string
	ThreadKey string
	UserKey   string // relates_to_user_id
	SentAt    time.Time
	Text      string
}

// ClockWrapper is the interaction wrapper of CLOCK.md §4.5.
type ClockWrapper interface {
	// OnUserMessage records the user message's timestamps (always, even when
	// temporal awareness is off) and returns the envelope for the turn.
	OnUserMessage(ctx context.Context, in *Inbound) (*ClockEnvelope, error)
	// OnAgentMessage records an agent message; pure acknowledgements are not
	// substantive and write nothing (§10.3).
	OnAgentMessage(ctx context.Context, m *AgentMessage) error
}
