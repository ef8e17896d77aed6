package clockstate

import (
	"regexp"
	"strconv"
	"strings"
)

// The forms people type (issue 21, follow-up): minutes in words before
// to/past ("ten to five", "twenty past 3"), approximate hours ("3ish",
// "5-ish"), two amounts offered ("in 20 or 30 mins", "in a day or two"),
// "first thing monday", "after lunch". Abbreviations ("wk", "yr") are in
// the rows that read the full words.

const (
	rIsh ruleID = iota + 300
	rAmountOr
	rFirstThing
)

const reAmountWord = `(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|forty[\s-]five|fifty|sixty|ninety)`

var typedRules = []ruleRow{
	// "3ish", "5-ish", "7:30ish", "3pm-ish", "noonish": the time itself
	// (ParseResult has no notion of approximate).
	{rIsh, span(`(?:(\d{1,2})(?:[:.](\d{2}))?\s*(AMPM)?|(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midday|midnight))\s*-?\s*ish(?:\s*(AMPM))?`), applyIsh, []string{"ish"}},
	// "in 20 or 30 mins", "20-30 minutes", "in a day or two": a question
	// offering the two amounts, never one of them.
	{rAmountOr, span(`(?:(in|within|after)\s+)?(?:(` + reAmountWord + `)\s*(or|to|-|–)\s*(` + reAmountWord + `)\s*(` + reUnitWord + `)|(an?|one)\s+(` + reUnitWord + `)\s+or\s+(two|three|2|3))(?:\s+(ago|from\s+now|later))?`), applyAmountOr, []string{" or ", "-", "–", " to "}},
	// "first thing monday", "first thing tomorrow": the start of that morning.
	{rFirstThing, span(`first\s+thing`), applyFirstThing, []string{"first thing"}},
}

// validTyped rejects the eager matches of the typed rules: an amount pair
// that is not from now ("5 to 10 minutes' walk" in a message).
func validTyped(id ruleID, capt func(int) string, text string, left int) bool {
	if id == rFirstThing {
		// "first thing monday", "remind me first thing"; not "the first
		// thing I noticed".
		return reFirstThingDay.MatchString(text[left:]) || reDurationAlone.MatchString(text[:left])
	}
	if id == rAmountOr {
		if d := capt(2); (d == "-" || d == "–") && !(isDigits(capt(1)) && isDigits(capt(3))) {
			return false // "forty-five mins" is one amount
		}
		return capt(0) != "" || capt(8) != "" || reDurationAlone.MatchString(text[:left])
	}
	return true
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// reFirstThingDay: "first thing" followed by the day or morning it opens.
var reFirstThingDay = regexp.MustCompile(`(?i)^first\s+thing\s+(?:on\s+|next\s+|this\s+)?(?:` + reWeekdayWord + `\b|tomorrow|tmrw?\b|tomoz|2mor|today|in\s+the\s+morning|morning)`)

// applyIsh: the time read as "at 3", "7:30" or "3pm" is.
func applyIsh(sp *timeSpec, x ruleCtx) {
	switch w := strings.ToLower(x.capt(3)); w {
	case "":
	case "noon", "midday":
		setTime(sp, 12, 0, 0)
		return
	case "midnight":
		setTime(sp, 24, 0, 0)
		return
	default:
		if x.capt(4) != "" {
			setTime12(sp, wordHour(w), x.capt(4), 0, 0) // "three-ish pm"
			return
		}
		setBare(sp, wordHour(w), 0)
		return
	}
	h, m := x.atoi(0), x.atoi(1)
	suffix := x.capt(2)
	if suffix == "" {
		suffix = x.capt(4) // "3ish pm"
	}
	switch {
	case suffix != "":
		setTime12(sp, h, suffix, m, 0)
	case h > 23 || m > 59:
		sp.invalid = true
	case x.capt(1) != "":
		setTime(sp, h, m, 0) // "7:30ish": as "7:30" is read
		sp.clockBare = h >= 1 && h <= 11 && !strings.HasPrefix(x.capt(0), "0")
	case h == 0 || h > 12:
		setTime(sp, h, 0, 0)
	default:
		setBare(sp, h, 0)
	}
}

// applyAmountOr: the question offering both amounts.
func applyAmountOr(sp *timeSpec, x ruleCtx) {
	a, b, unit := x.capt(1), x.capt(3), x.capt(4)
	if unit == "" {
		a, unit, b = x.capt(5), x.capt(6), x.capt(7)
	}
	na, ok1 := amountF(a)
	nb, ok2 := amountF(b)
	name := unitName(unit)
	if !ok1 || !ok2 || name == "" {
		sp.invalid = true
		return
	}
	sp.rel = true
	say := func(n float64) string {
		s := strconv.FormatFloat(n, 'f', -1, 64) + " " + name
		if n != 1 {
			s += "s"
		}
		if strings.HasPrefix(strings.ToLower(x.capt(8)), "ago") {
			return s + " ago"
		}
		return "in " + s
	}
	sp.question = "Do you mean " + say(na) + " or " + say(nb) + "?"
}

// unitName is the singular English name of a unit word ("mins": minute).
func unitName(u string) string {
	u = strings.ToLower(u)
	for _, p := range []struct{ prefix, name string }{{"mo", "month"}, {"s", "second"}, {"m", "minute"}, {"h", "hour"},
		{"d", "day"}, {"w", "week"}, {"f", "fortnight"}, {"y", "year"}} {
		if strings.HasPrefix(u, p.prefix) {
			return p.name
		}
	}
	return ""
}

// applyFirstThing: the start of the morning of the day named (the start
// of the "morning" window), or a bare hour in it ("first thing monday at
// 8"); settled in settleHours.
func applyFirstThing(sp *timeSpec, x ruleCtx) {
	sp.firstThing = true
	if sp.part == "" {
		sp.part = "morning"
	}
}

// minuteWords are the minutes said alone before to/past (a clock face's).
var minuteWords = map[string]int{"quarter": 15, "a quarter": 15, "half": 30, "five": 5, "ten": 10, "twenty": 20}

// wordMinutes reads the minutes before to/past: "ten", "twenty five",
// "twenty-two minutes", "7 minutes", "quarter". ok is false for a bare
// digit ("3 to 5" is a range, not 4:57) unless past is said.
func wordMinutes(s string, past bool) (int, bool) {
	w := strings.Join(strings.Fields(strings.ToLower(s)), " ")
	w, unit := strings.CutSuffix(w, " minutes")
	if !unit {
		w, unit = strings.CutSuffix(w, " minute")
	}
	if n, ok := minuteWords[w]; ok {
		return n, true
	}
	if n, err := strconv.Atoi(w); err == nil {
		return n, unit || past
	}
	n := 0
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == ' ' || r == '-' }) {
		v, ok := numberWords[part]
		if !ok {
			return 0, false
		}
		n += v
	}
	return n, n > 0
}

// applyQuarter: "a quarter to 6pm", "half past 3", "ten to five", "10
// minutes past noon", "twenty-two minutes to 4". Without am/pm a bare
// hour is left to a part of day or asked, as "at 9" is.
func applyQuarter(sp *timeSpec, x ruleCtx) {
	n, ok := wordMinutes(x.capt(0), isPast(x.capt(1)))
	if !ok || n <= 0 || n >= 60 {
		sp.invalid = true
		return
	}
	h, suf := 0, x.capt(3)
	switch strings.ToLower(x.capt(2)) {
	case "noon":
		h, suf = 12, ""
	case "midnight":
		h, suf = 24, ""
		if isPast(x.capt(1)) {
			h = 0
		}
	default:
		h = wordHour(x.capt(2))
	}
	if suf != "" {
		hh, ok := hour12(h, suf)
		if !ok {
			sp.invalid = true
			return
		}
		h = hh
	}
	total := h*60 + n
	if !isPast(x.capt(1)) {
		total = h*60 - n
	}
	if suf == "" && h >= 1 && h <= 12 && x.capt(2) != "" && strings.ToLower(x.capt(2)) != "noon" {
		// am or pm unknown: like "at 9", resolved by a part of day or asked.
		bh := total / 60
		if bh == 0 {
			bh = 12
		}
		setBare(sp, bh, total%60)
		return
	}
	if total < 0 {
		total += 24 * 60
	}
	setTime(sp, total/60%24, total%60, 0)
}

func isPast(s string) bool {
	s = strings.ToLower(s)
	return s == "past" || s == "after"
}
