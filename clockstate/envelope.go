package clockstate

import (
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// maxEnvelopeActions bounds the open actions listed in the envelope.
const maxEnvelopeActions = 3

// maxEnvelopeParticipants bounds the per-participant conversions.
const maxEnvelopeParticipants = 6

// render writes the envelope text for the system prompt. The first line is
// always there (the turn's time with offset in the Session TZ, its label,
// the elapsed time); the rest only when it is relevant (§3: no spam).
func (w *Wrapper) render(t *turn, env *kairos.ClockEnvelope, out CheckinOutcome, open []*kairos.ClockAction,
	pr ParseResult, timeRef, timeRelated, cue bool) string {
	cp := &t.pol.Clock
	var b strings.Builder
	b.Grow(256)

	renderNow(&b, t, env)
	if !env.TemporalAwareness && !timeRelated {
		return b.String()
	}
	renderCheckins(&b, t, env, out, open, cue)
	if timeRelated {
		w.renderAnchoring(&b, t, env, pr, timeRef)
	}
	// §8.2: impactful actions wait for the user's yes (light mode: "ask
	// before any impactful action").
	if cp.Inference.RequireConfirmationForImpactfulActions && (timeRelated || env.TemporalAwareness) {
		b.WriteString("\nConfirm before reminders, calendar changes, messages to others, purchases, deploys or deletions.")
	}
	return b.String()
}

// renderNow writes the first line, always there: the turn's time with its
// offset in the Session TZ and where the zone came from, the elapsed time,
// and the user's home time when it differs.
func renderNow(b *strings.Builder, t *turn, env *kairos.ClockEnvelope) {
	b.WriteString("Clock: now ")
	b.WriteString(env.NowISO)
	b.WriteString(" (")
	b.WriteString(env.SessionTZ)
	switch t.res.Source {
	case TZFromMessage:
		b.WriteString(", stated in the message")
	case TZFromLocation:
		b.WriteString(", inferred from a place mentioned")
	case TZFromFallback:
		b.WriteString(", timezone unknown")
	}
	b.WriteString("). ")
	if env.Elapsed == "" {
		b.WriteString("First interaction in this thread.")
	} else {
		b.WriteString("Since last interaction in this thread: ")
		b.WriteString(env.Elapsed)
		b.WriteByte('.')
	}
	if home := t.st.User.DefaultTZ; home != "" && home != env.SessionTZ && ValidTZ(home) {
		b.WriteString(" User's home TZ: ")
		b.WriteString(home)
		b.WriteString(" (")
		b.WriteString(ToISO(t.at, home))
		b.WriteString(").")
	}
}

// renderCheckins writes activity elsewhere (§5.1), the check-ins that
// fired (§9), the open actions they may refer to, and the inference rule.
func renderCheckins(b *strings.Builder, t *turn, env *kairos.ClockEnvelope, out CheckinOutcome, open []*kairos.ClockAction, cue bool) {
	cp := &t.pol.Clock
	// Active elsewhere since this thread's last interaction (§5.1).
	if env.TemporalAwareness && env.ElapsedAnyChannel != "" && t.st.User.LastInteractionAnyChannel.After(t.st.Thread.LastInteraction.Add(time.Minute)) {
		b.WriteString("\nUser last active on any channel: ")
		b.WriteString(env.ElapsedAnyChannel)
		b.WriteString(" ago.")
	}

	// Check-ins (§9), by their policy names.
	for _, a := range out.Actions {
		b.WriteString("\nCheck-in ")
		b.WriteString(a)
		b.WriteString(" (rule ")
		b.WriteString(out.By[a])
		b.WriteString("): ")
		switch a {
		case CheckinAskForUpdates:
			b.WriteString("before continuing, briefly ask what has changed since last time.")
		case CheckinOfferRecap:
			if t.mode == kairos.ClockModeNormal {
				b.WriteString("give a short recap of where things stood to re-anchor.")
			} else {
				b.WriteString("offer a short recap to re-anchor.")
			}
		case CheckinAllowHedgedReference:
			b.WriteString("you may refer to the open action below, hedged (\"did you end up…?\").")
		}
	}
	hedged := false
	for _, a := range out.Actions {
		hedged = hedged || a == CheckinAllowHedgedReference
	}
	if (hedged || cue) && len(open) > 0 {
		for i, a := range open {
			if i == maxEnvelopeActions {
				break
			}
			b.WriteString("\nOpen action (unconfirmed): \"")
			b.WriteString(a.Label)
			b.WriteString("\" ")
			b.WriteString(EffectiveStatus(a, t.at))
			b.WriteString(", clocked ")
			b.WriteString(ToISO(a.RecordedAt, env.SessionTZ))
			b.WriteString(" (")
			b.WriteString(FormatElapsed(t.at.Sub(a.RecordedAt)))
			b.WriteString(" ago")
			if a.ExpectedTypicalMinutes > 0 {
				b.WriteString(", usually ")
				b.WriteString(FormatElapsed(time.Duration(a.ExpectedTypicalMinutes) * time.Minute))
			}
			b.WriteString(").")
		}
		if cue {
			b.WriteString("\nThe message may relate to an open action: ask a confirming question, do not assume.")
		}
	}
	if len(out.Actions) > 0 || cue {
		if cp.Inference.Enabled {
			b.WriteString("\nInference is for tone and continuity only: hedge (\"if\", \"sounds like\", \"hope\"), never state it as fact, accept correction at once.")
		} else {
			b.WriteString("\nDo not infer what happened in the gap; ask.")
		}
	}
}

// renderAnchoring (§4.2, §4.3, §11), also when temporal awareness is off:
// the zone question, the time the message names as an instant (or its
// clarification), the anchoring rule and the zones of a group.
func (w *Wrapper) renderAnchoring(b *strings.Builder, t *turn, env *kairos.ClockEnvelope, pr ParseResult, timeRef bool) {
	if t.res.Question != "" && !(timeRef && pr.ClarificationQuestion == t.res.Question) {
		b.WriteString("\nAsk before using it: ")
		b.WriteString(t.res.Question)
	}
	switch {
	case timeRef && pr.NeedsClarification:
		b.WriteString("\nTime \"")
		b.WriteString(pr.Phrase)
		b.WriteString("\" is ambiguous; ask: ")
		b.WriteString(pr.ClarificationQuestion)
	case timeRef && pr.Start != nil:
		b.WriteString("\nTime \"")
		b.WriteString(pr.Phrase)
		b.WriteString("\" = ")
		b.WriteString(ToISO(*pr.Start, env.SessionTZ))
		if pr.End != nil {
			b.WriteString(" to ")
			b.WriteString(ToISO(*pr.End, env.SessionTZ))
		}
		b.WriteString(" (")
		b.WriteString(env.SessionTZ)
		b.WriteString(").")
	}
	b.WriteString("\nAnchor times without a zone to the Session TZ; state absolute times with their zone.")
	if t.res.Source == TZFromFallback {
		b.WriteString(" The user's timezone is unknown: say you assume UTC and ask for it before scheduling.")
	}
	w.renderZones(b, t, pr, timeRef)
}

// renderZones adds group conversions (§7.3, §11) and the ambiguity
// warning when the zones involved are at least ambiguity_threshold_hours
// apart.
func (w *Wrapper) renderZones(b *strings.Builder, t *turn, pr ParseResult, timeRef bool) {
	ps := participantsWithTZ(t)
	instant := t.at
	if timeRef && pr.Start != nil {
		instant = *pr.Start
	}
	if t.group && len(ps) > 0 {
		b.WriteString("\nGroup: give UTC plus each participant's local time. ")
		b.WriteString(instant.UTC().Format(time.RFC3339))
		for i, p := range ps {
			if i == maxEnvelopeParticipants {
				break
			}
			b.WriteString("; ")
			b.WriteString(p.UserKey)
			b.WriteByte(' ')
			b.WriteString(p.DefaultTZ)
			b.WriteByte(' ')
			b.WriteString(ToISO(instant, p.DefaultTZ))
		}
		b.WriteByte('.')
	}
	if t.res.Source == TZFromMessage || !timeRef || pr.Kind == KindRelative {
		return
	}
	threshold := t.pol.Clock.AmbiguityThresholdHours
	if threshold <= 0 {
		return
	}
	zones := map[string]bool{t.res.TZ: true}
	for _, p := range ps {
		zones[p.DefaultTZ] = true
	}
	if len(zones) < 2 {
		return
	}
	lo, hi := 1<<30, -(1 << 30)
	var names []string
	for _, z := range sortedZones(zones) {
		off, err := OffsetMinutes(z, t.at)
		if err != nil {
			continue
		}
		names = append(names, z)
		lo, hi = min(lo, off), max(hi, off)
	}
	if float64(hi-lo) >= threshold*60 {
		b.WriteString("\nZones here differ by ")
		b.WriteString(strconv.FormatFloat(float64(hi-lo)/60, 'f', -1, 64))
		b.WriteString("h (")
		b.WriteString(strings.Join(names, ", "))
		b.WriteString("): confirm which zone \"")
		b.WriteString(pr.Phrase)
		b.WriteString("\" means.")
	}
}
