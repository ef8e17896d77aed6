package clockstate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// Sources of a resolved Session TZ, in §4.2 precedence order.
const (
	TZFromMessage  = "message"  // 1. explicit in the message
	TZFromThread   = "thread"   // 2. the thread's stored override
	TZFromUser     = "user"     // 3. the user's default
	TZFromLocation = "location" // 4. an unambiguous place mentioned
	TZFromFallback = "fallback" // 5. UTC, with a notice when time matters
)

// TZResolution is a resolved Session TZ.
type TZResolution struct {
	TZ     string // IANA name (or a UTC±hh:mm label for odd fixed offsets)
	Source string // TZFrom*
	// Question asks about an abbreviation in the message that nothing
	// known explains (§4.2: never map one silently).
	Question string
}

// ResolveSessionTZ applies the §4.2 precedence to a message: a zone stated
// in text; the thread's override; the user's default; an unambiguous place
// mentioned in text; UTC. Abbreviations in text count as explicit only when
// one of the known zones (thread override, user default, then known) uses
// them.
func ResolveSessionTZ(text, threadTZ, userTZ string, known []string, ref time.Time) TZResolution {
	zones := knownZones(append([]string{threadTZ, userTZ}, known...)...)
	var question string
	if text != "" {
		if len(text) > maxParseInput {
			text = text[:maxParseInput]
		}
		hit, found, q := findExplicitTZ(text, zones, ref)
		if found {
			return TZResolution{TZ: hit.TZ, Source: TZFromMessage}
		}
		question = q
	}
	switch {
	case threadTZ != "" && ValidTZ(threadTZ):
		return TZResolution{TZ: threadTZ, Source: TZFromThread, Question: question}
	case userTZ != "" && ValidTZ(userTZ):
		return TZResolution{TZ: userTZ, Source: TZFromUser, Question: question}
	}
	if text != "" {
		if tz, ok := findMentionedPlace(text); ok {
			return TZResolution{TZ: tz, Source: TZFromLocation, Question: question}
		}
	}
	return TZResolution{TZ: "UTC", Source: TZFromFallback, Question: question}
}

// Provider is the timezone provider of §4.4.
type Provider struct {
	store   kairos.ClockStore
	now     func() time.Time
	agentTZ string
}

// NewProvider returns a provider reading stored state from store (which
// may be nil: SessionTimezone then knows no overrides). now defaults to
// time.Now and agentTZ to the OS timezone (DetectAgentTZ).
func NewProvider(store kairos.ClockStore, now func() time.Time, agentTZ string) *Provider {
	if now == nil {
		now = time.Now
	}
	if agentTZ == "" || !ValidTZ(agentTZ) {
		agentTZ = DetectAgentTZ()
	}
	return &Provider{store: store, now: now, agentTZ: agentTZ}
}

// Now is §4.4 now(): one snapshot of the current instant for a decision
// cycle (take it once and pass it on).
func (p *Provider) Now() time.Time { return p.now() }

// AgentTimezone is §4.4 agent_timezone(): the host's IANA zone or "UTC".
func (p *Provider) AgentTimezone() string { return p.agentTZ }

// SessionTimezone is §4.4 session_timezone(thread_key) from stored state:
// the thread's override, then (in a DM) the user's default, then UTC. A
// message's own zone and mentioned places (steps 1 and 4) need the message
// and come from ResolveSessionTZ.
func (p *Provider) SessionTimezone(ctx context.Context, threadKey string) (string, error) {
	if p.store == nil {
		return "UTC", nil
	}
	st, err := p.store.LoadClockState(ctx, DMUserKey(threadKey), threadKey)
	if err != nil {
		return "", fmt.Errorf("session timezone: %w", err)
	}
	return ResolveSessionTZ("", st.Thread.SessionTZ, st.User.DefaultTZ, nil, p.now()).TZ, nil
}

// OffsetMinutes is §4.4 offset_minutes(tz, instant).
func (p *Provider) OffsetMinutes(tz string, instant time.Time) (int, error) {
	return OffsetMinutes(tz, instant)
}

// ToISO is §4.4 to_iso(instant, tz).
func (p *Provider) ToISO(instant time.Time, tz string) string { return ToISO(instant, tz) }

// ParseAnchoredTime is §4.4 parse_anchored_time(text, tz, reference_instant).
func (p *Provider) ParseAnchoredTime(text, tz string, ref time.Time) ParseResult {
	return ParseAnchoredTime(text, tz, ref)
}

// DMUserKey returns the user key of a DM thread key
// ("agent:main:telegram:dm:42" → "telegram:42"), "" for other threads.
func DMUserKey(threadKey string) string {
	parts := strings.Split(threadKey, ":")
	if len(parts) != 5 || parts[0] != "agent" || parts[3] != kairos.ChatDM {
		return ""
	}
	if _, err := strconv.ParseInt(parts[4], 10, 64); err != nil {
		return ""
	}
	return parts[2] + ":" + parts[4]
}
