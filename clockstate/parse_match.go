package clockstate

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/olebedev/when/rules"
)

// validMatch rejects the eager matches of the rules: lower-case weekday
// abbreviations ("the sun"), bare month words ("I may"), greetings ("good
// morning"), "a" / "p" suffixes after a space ("2 a day"), dash-separated
// numbers ("10-20"), and undated day/month pairs ("1/2 cup").
func validMatch(id ruleID, m *rules.Match, text string) bool {
	capt := func(i int) string {
		if i < len(m.Captures) {
			return m.Captures[i]
		}
		return ""
	}
	before := text[:m.Left]
	switch id {
	case rWeekday:
		day := capt(1)
		if day == "" {
			return false
		}
		if !fullWeekdays[strings.ToLower(day)] {
			// "Sat", or a lower-case "sat" next to a time ("sat 10am").
			r, _ := utf8.DecodeRuneInString(day)
			return unicode.IsUpper(r) || capt(0) != "" || reTimeAfter.MatchString(text[m.Right:]) ||
				reAbbrDayCtx.MatchString(before) || rePartAfter.MatchString(text[m.Right:])
		}
	case rMonthDate:
		mon := capt(2)
		if capt(0) == "" && capt(1) == "" && capt(3) == "" && capt(4) == "" {
			if reYearAfter.MatchString(text[m.Right:]) {
				return true // "June 2027"
			}
			r, _ := utf8.DecodeRuneInString(mon)
			return len(mon) > 3 && unicode.IsUpper(r) && reMonthCtx.MatchString(before)
		}
		if capt(0) == "" && capt(1) == "" && len(mon) <= 4 && strings.ToLower(mon) != "may" {
			// "mar 3" is fine; "sat 3" is not a month and never matches.
			return true
		}
	case rCasualTime:
		return !reGoodBefore.MatchString(before)
	case rHour:
		suf := capt(1)
		if len(suf) == 1 && strings.ContainsAny(m.Text, " \t") {
			return false
		}
	case rHourMinute:
		if strings.Contains(m.Text, "-") {
			return false
		}
	case rSlashDate:
		return capt(2) != "" || reSlashCtx.MatchString(before)
	case rDuration:
		// Alone ("90 mins"), not a four-digit clock ("1930 hrs").
		if capt(0) != "" || capt(2) != "" {
			return true
		}
		return reDurationAlone.MatchString(before) && !reFourDigits.MatchString(capt(1)) && endsAlone(before, text[m.Right:])
	case rBareHour:
		if m.Right < len(text) && (text[m.Right] == ':' || text[m.Right] == '.') && m.Right+1 < len(text) && text[m.Right+1] >= '0' && text[m.Right+1] <= '9' {
			return false
		}
		// Right may end after the boundary character; look back too.
		tail := strings.TrimRight(m.Text, " \t")
		if strings.HasSuffix(tail, ":") || strings.HasSuffix(tail, ".") {
			rest := text[m.Left+len(tail):]
			if rest != "" && rest[0] >= '0' && rest[0] <= '9' {
				return false
			}
		}
	case rQuarter:
		return !reUnitAfter.MatchString(text[m.Right:]) // "ten to five people"
	default:
		return validOwn(id, capt, text, m.Left, m.Right)
	}
	return true
}

// validOwn is validMatch for our own rule tables, by their ID ranges.
func validOwn(id ruleID, capt func(int) string, text string, left, right int) bool {
	switch {
	case id >= rVague:
		return validVague(id, capt, text, left)
	case id >= rNthWeekday:
		return validMonthly(id, capt, text, left)
	case id >= rMilitary:
		return validForm(id, capt, text, left)
	case id >= rIsh:
		return validTyped(id, capt, text, left)
	case id >= rDayOfMonth:
		return validChat(id, capt, text, left, right)
	}
	return true
}

// reAbbrDayCtx: a lower-case weekday abbreviation after these is a day.
var reAbbrDayCtx = regexp.MustCompile(`(?i)\b(?:on|next|this|last|from|till|until|by)\s+$`)

var reFourDigits = regexp.MustCompile(`^\s*\d{4}`)

// rePartAfter: a part of day follows ("sat morning").
var rePartAfter = regexp.MustCompile(`(?i)^\s*(?:morning|afternoon|evening|night|arvo)\b`)

// reDurationAlone: a duration with nothing before it but a request ("90
// mins", "remind me 2 hours") is from now.
var reDurationAlone = regexp.MustCompile(`(?i)^\s*(?:(?:please\s+|pls\s+)?(?:remind|ping|nudge|tell|text|message|buzz|give)\s+me\s*)?$`)

// reAloneAfter: what may follow a duration alone for it to be from now:
// the end, punctuation, thanks; after a request ("remind me 2 hours"),
// also what it is for ("to stretch", "about the oven").
var (
	reAloneAfter        = regexp.MustCompile(`(?i)^[\s.!?…]*(?:(?:please|pls|plz|thanks|thx|thank\s+you)\b[\s.!?…]*)?$`)
	reAloneAfterRequest = regexp.MustCompile(`(?i)^\s*(?:,\s*)?(?:to|that|about|re|for)\b`)
)

// endsAlone: a duration alone is from now only when nothing after it ties
// it to something else: "45 mins of cardio is plenty", "30 minutes before
// the meeting" are no instant.
func endsAlone(before, after string) bool {
	if reAloneAfter.MatchString(after) {
		return true
	}
	return strings.TrimSpace(before) != "" && reAloneAfterRequest.MatchString(after)
}

// firstCluster keeps the first run of non-overlapping matches joined only
// by connector words ("at", "on", "in the", ",").
func firstCluster(ms []tmatch, text string) []tmatch {
	slices.SortStableFunc(ms, func(a, b tmatch) int {
		if a.left != b.left {
			return a.left - b.left
		}
		return (b.right - b.left) - (a.right - a.left)
	})
	kept := ms[:0:0]
	for _, m := range ms {
		overlap := false
		for _, k := range kept {
			if m.left < k.right && k.left < m.right {
				overlap = true
				break
			}
		}
		if !overlap {
			kept = append(kept, m)
		}
	}
	slices.SortStableFunc(kept, func(a, b tmatch) int { return a.left - b.left })
	out := kept[:1]
	for _, m := range kept[1:] {
		if !onlyConnectors(text[out[len(out)-1].right:m.left]) {
			break
		}
		out = append(out, m)
	}
	return out
}

var connectors = map[string]bool{"at": true, "on": true, "in": true, "the": true, "by": true, "of": true, "around": true,
	"about": true, "from": true, "this": true, "and": true, "@": true, "~": true, "-": true, ",": true, "approx": true}

func onlyConnectors(gap string) bool {
	for _, f := range strings.FieldsFunc(gap, func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
		if !connectors[strings.ToLower(f)] {
			return false
		}
	}
	return true
}

// reGreeting: "good morning" is a greeting, not a part of day.
var reGreeting = regexp.MustCompile(`(?i)\bgood\s+(?:morning|afternoon|evening|night|day)\b`)

// readGreetings reads greetings as fillers: blanked for the rules and
// consumed for the accounting step, so "good morning" is neither a time
// nor a time word left unread.
func (p *parser) readGreetings() {
	if !mayHoldFold(p.text, "good") {
		return
	}
	for _, m := range reGreeting.FindAllStringIndex(p.text, 4) {
		p.use(m[0], m[1])
		p.mask(m[0], m[1])
	}
}
