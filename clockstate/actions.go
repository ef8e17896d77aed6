package clockstate

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// TTLs of clocked actions (§6.4, §6.5). All actions expire.
const (
	TTLDefault       = 24 * time.Hour      // planned / in_progress
	TTLSleep         = 10 * time.Hour      // "going to sleep": ~8–12 h
	TTLProjectAuto   = 7 * 24 * time.Hour  // auto-stored in a project thread
	TTLProjectClock  = 30 * 24 * time.Hour // clocked explicitly in a project thread
	TTLMaxHorizon    = 30 * 24 * time.Hour // a stated horizon is capped here
	horizonAfterSlot = 12 * time.Hour      // kept this long past a stated time
)

// ActionTTL picks an action's time to live: sleep ~10 h; a project action
// (no personal activity template, in a project thread) 7 days (auto) or 30
// days (clock it); otherwise 24 h, or longer
// when the user stated a later horizon (horizon, if not zero, is the end
// of that stated time), capped at 30 days.
func ActionTTL(activity, threadKind, source string, recorded, horizon time.Time) time.Duration {
	if activity == "sleep" || activity == "sleep:nap" {
		return TTLSleep
	}
	ttl := TTLDefault
	// Personal activities (gym, meals, brb…) keep the day-scale TTL even
	// in a project thread; other actions there are project actions.
	if threadKind == kairos.ThreadKindProject && activity == "" {
		ttl = TTLProjectAuto
		if source == kairos.ActionSourceClockIt {
			ttl = TTLProjectClock
		}
	}
	if !horizon.IsZero() {
		if h := horizon.Sub(recorded) + horizonAfterSlot; h > ttl {
			ttl = h
		}
	}
	if ttl > TTLMaxHorizon {
		ttl = TTLMaxHorizon
	}
	return ttl
}

// EffectiveStatus is an action's status at an instant: closed statuses
// stay; an action past its expiry is expired; an open action past its
// expected maximum duration is likely_done.
func EffectiveStatus(a *kairos.ClockAction, at time.Time) string {
	switch a.Status {
	case kairos.ActionDone, kairos.ActionCanceled, kairos.ActionExpired:
		return a.Status
	}
	if !a.ExpiresAt.After(at) {
		return kairos.ActionExpired
	}
	if a.ExpectedMaxMinutes > 0 && !at.Before(a.RecordedAt.Add(time.Duration(a.ExpectedMaxMinutes)*time.Minute)) {
		return kairos.ActionLikelyDone
	}
	return a.Status
}

// IsOpen reports whether an action still counts as open at an instant
// (planned, in_progress or likely_done, and not expired).
func IsOpen(a *kairos.ClockAction, at time.Time) bool {
	switch EffectiveStatus(a, at) {
	case kairos.ActionPlanned, kairos.ActionInProgress, kairos.ActionLikelyDone:
		return true
	}
	return false
}

// isDMThread reports whether a thread key is a direct-message thread.
func isDMThread(threadKey string) bool { return strings.Contains(threadKey, ":dm:") }

// visibleActions are the open actions of the user that may be brought up
// in threadKey at `at`, newest first: actions clocked in this thread, and
// in a DM also those clocked in the user's (or a linked identity's) other
// DMs. A group never sees actions from elsewhere (§7.3: actions are per
// user, not for the whole group).
func visibleActions(actions []*kairos.ClockAction, threadKey string, at time.Time) []*kairos.ClockAction {
	var out []*kairos.ClockAction
	for _, a := range actions {
		if !IsOpen(a, at) {
			continue
		}
		if a.ThreadKey == threadKey || (isDMThread(threadKey) && (a.ThreadKey == "" || isDMThread(a.ThreadKey))) {
			out = append(out, a)
		}
	}
	return out
}

// expectedMinutes gives an activity's typical and maximum minutes: the
// user's calibration first, then the template.
func expectedMinutes(activity string, cal map[string]kairos.ActivityCalibration) (int, int) {
	if activity == "" {
		return 0, 0
	}
	if c, ok := cal[activity]; ok && c.TypicalMinutes > 0 {
		return c.TypicalMinutes, c.MaxMinutes
	}
	for _, t := range activityTemplates {
		if t.key == activity {
			return t.typical, t.maxMinutes
		}
	}
	return 0, 0
}

// Calibrate folds an observed duration into an activity's calibration
// (§6.3, per user): typical moves a quarter of the way towards the
// observation, max grows to cover it. Observations outside 1 min–24 h are
// ignored.
func Calibrate(prev kairos.ActivityCalibration, observed time.Duration, at time.Time) (kairos.ActivityCalibration, bool) {
	mins := int(observed / time.Minute)
	if mins < 1 || mins > 24*60 {
		return prev, false
	}
	next := kairos.ActivityCalibration{UpdatedAt: at}
	if prev.TypicalMinutes <= 0 {
		next.TypicalMinutes = mins
	} else {
		next.TypicalMinutes = (prev.TypicalMinutes*3 + mins + 2) / 4
	}
	next.MaxMinutes = prev.MaxMinutes
	if next.MaxMinutes < mins {
		next.MaxMinutes = mins
	}
	if next.MaxMinutes < next.TypicalMinutes {
		next.MaxMinutes = next.TypicalMinutes
	}
	return next, true
}

// newActionID returns "act_" and 12 hex digits.
func newActionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "act_" + hex.EncodeToString(b[:])
}

// quoteOf is the short excerpt kept when store_quotes is true.
func quoteOf(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= 140 {
		return text
	}
	cut := 140
	for cut > 0 && (text[cut]&0xC0) == 0x80 {
		cut--
	}
	return text[:cut] + "…"
}
