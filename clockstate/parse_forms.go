package clockstate

// Clock forms of issue 32 (item 4): four-digit 24-hour times ("at 0645",
// "1900 hrs", "0700 hours"), an hour with an "h" ("at 18h") and a clock
// time with a trailing "h" or "hrs" ("19:00h", "19.00 hrs"). Each is the
// 24-hour clock as written.

const (
	rMilitary ruleID = iota + 400
	rHourOnly
	rClockH
	rHourAmPm
	rThreeDigit
)

var formRules = []ruleRow{
	{rMilitary, span(`(?:(?:at|@|around|about|from|till|until|before|after)\s*([01]\d|2[0-3])([0-5]\d)(?:\s*(?:h|hrs?|hours))?|([01]\d|2[0-3])([0-5]\d)\s*(?:h|hrs?|hours)|(0\d)([0-5]\d))`),
		applyMilitary, []string{"#"}},
	{rHourOnly, span(`(?:at|@|around|from|till|until)\s*(\d{1,2})\s?h`), applyHourOnly, []string{"#h", "# h"}},
	{rClockH, span(`(\d{1,2})[:.](\d{2})\s?(?:h|hrs|hours|uhr)`), applyClockH, []string{"#h", "# h", "hrs", "hours", "uhr"}},
	// "three am", "3 oclock am", "3 o'clock pm".
	{rHourAmPm, span(`(?:(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s*(?:o'?\s*clock\s*)?|(\d{1,2})\s*o'?\s*clock\s*)(AMPM)`),
		applyHourAmPm, []string{"am", "pm", "a.", "p."}},
	// "330 p.m.", "1030pm", "at 730 in the evening" (a part of day or the suffix says which half).
	{rThreeDigit, span(`(?:(at|@|around|about)\s*(1[0-2]|[1-9])([0-5]\d)(?:\s*(AMPM))?|(1[0-2]|[1-9])([0-5]\d)\s*(AMPM))`), applyThreeDigit, []string{"#"}},
}

// validForm rejects the eager matches of the clock forms: a clock time
// with "hours" that is an amount ("in 2:30 hours"). Four digits alone are
// no time ("in 2026", "room 1530"): rMilitary's regexp wants a lead word,
// a unit or a leading zero.
func validForm(id ruleID, capt func(int) string, text string, left int) bool {
	switch id {
	case rClockH:
		return !reInBefore.MatchString(text[:left])
	case rThreeDigit:
		// "at 1030" is rMilitary's; "at 730" and "330 p.m." are these.
		return capt(3) != "" || capt(6) != "" || len(capt(1))+len(capt(2)) == 3
	}
	return true
}

// applyHourAmPm: "three am", "3 oclock pm".
func applyHourAmPm(sp *timeSpec, x ruleCtx) {
	h := x.capt(0)
	if h == "" {
		h = x.capt(1)
	}
	setTime12(sp, wordHour(h), x.capt(2), 0, 0)
}

// applyThreeDigit: "330 p.m." is 15:30; "at 730" a bare 7:30, settled by a
// part of day or asked.
func applyThreeDigit(sp *timeSpec, x ruleCtx) {
	h, m, suf := x.atoi(1), x.atoi(2), x.capt(3)
	if x.capt(0) == "" {
		h, m, suf = x.atoi(4), x.atoi(5), x.capt(6)
	}
	if suf != "" {
		setTime12(sp, h, suf, m, 0)
		return
	}
	setBare(sp, h, m)
}

// applyMilitary: "at 0645", "1900 hrs", "0700": whichever form matched.
func applyMilitary(sp *timeSpec, x ruleCtx) {
	for i := 0; i < 6; i += 2 {
		if x.capt(i) != "" {
			setTime(sp, x.atoi(i), x.atoi(i+1), 0)
			return
		}
	}
}

func applyHourOnly(sp *timeSpec, x ruleCtx) {
	if h := x.atoi(0); h <= 23 {
		setTime(sp, h, 0, 0)
		return
	}
	sp.invalid = true
}

func applyClockH(sp *timeSpec, x ruleCtx) {
	if h := x.atoi(0); h <= 23 {
		setTime(sp, h, x.atoi(1), 0)
		return
	}
	sp.invalid = true
}
