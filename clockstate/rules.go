package clockstate

import (
	"time"

	"github.com/kairos-agent/kairos"
)

// Check-in actions, by their policy names (§0, §9).
const (
	CheckinAskForUpdates        = "ask_for_updates"
	CheckinOfferRecap           = "offer_recap"
	CheckinAllowHedgedReference = "allow_hedged_reference"
)

// CheckinInput is what check-in rules are evaluated against (§5.1).
type CheckinInput struct {
	ThreadKind     string    // "" reads as conversation
	Last           time.Time // the thread's last interaction; zero when none
	LastAnyChannel time.Time // the user's last interaction anywhere; zero when none
	At             time.Time // this turn
	HasOpenAction  bool
	Loc            *time.Location // Session TZ, for calendar durations
}

// CheckinOutcome is what fired.
type CheckinOutcome struct {
	Actions []string // policy action names, in rule order, without repeats
	Rules   []string // ids of the rules that fired, in order
	// By maps each action to the first rule that asked for it.
	By map[string]string
}

// elapsedAtLeast reports whether at is at least d after last, counting
// calendar units in loc (P1D across a DST change is one calendar day).
func elapsedAtLeast(last, at time.Time, d kairos.Duration, loc *time.Location) bool {
	if last.IsZero() {
		return false
	}
	return !at.Before(AddISODuration(last, d, loc))
}

// EvaluateCheckins evaluates the rules in order (§5.1). A rule fires when
// every condition it states holds: thread_kind equals the thread's kind,
// elapsed_gte / elapsed_any_channel_gte are reached (never on a first
// interaction), has_open_action matches. Every firing rule contributes
// its actions. (Durations were checked when the policy was decoded.)
func EvaluateCheckins(rules []kairos.CheckinRule, in CheckinInput) CheckinOutcome {
	var out CheckinOutcome
	kind := in.ThreadKind
	if kind == "" {
		kind = kairos.ThreadKindConversation
	}
	loc := in.Loc
	if loc == nil {
		loc = time.UTC
	}
	var id string
	add := func(a string) {
		if _, ok := out.By[a]; ok {
			return
		}
		if out.By == nil {
			out.By = map[string]string{}
		}
		out.By[a] = id
		out.Actions = append(out.Actions, a)
	}
rules:
	for _, r := range rules {
		w := r.When
		if w.ThreadKind != "" && w.ThreadKind != kind {
			continue
		}
		if w.HasOpenAction != nil && *w.HasOpenAction != in.HasOpenAction {
			continue
		}
		for _, c := range []struct {
			d    *kairos.Duration
			last time.Time
		}{{w.ElapsedGTE, in.Last}, {w.ElapsedAnyChannelGTE, in.LastAnyChannel}} {
			if c.d != nil && !elapsedAtLeast(c.last, in.At, *c.d, loc) {
				continue rules
			}
		}
		fired := false
		id = r.ID
		if r.Then.AskForUpdates {
			add(CheckinAskForUpdates)
			fired = true
		}
		if r.Then.OfferRecap {
			add(CheckinOfferRecap)
			fired = true
		}
		if r.Then.AllowHedgedReference {
			add(CheckinAllowHedgedReference)
			fired = true
		}
		if fired {
			out.Rules = append(out.Rules, r.ID)
		}
	}
	return out
}
