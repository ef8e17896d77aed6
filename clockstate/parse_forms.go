package clockstate

import (
	"strings"
)

// Clock forms of issue 32 (item 4): four-digit 24-hour times ("at 0645",
// "1900 hrs", "0700 hours"), an hour with an "h" ("at 18h") and a clock
// time with a trailing "h" or "hrs" ("19:00h", "19.00 hrs"). Each is the
// 24-hour clock as written.

const (
	rMilitary ruleID = iota + 400
	rHourOnly
	rClockH
)

var formRules = []ruleRow{
	{rMilitary, span(`(?:(at|@|around|about|from|till|until|before|after)\s*)?([01]\d|2[0-3])([0-5]\d)(?:\s*(h|hrs?|hours))?`), applyMilitary, []string{"#"}},
	{rHourOnly, span(`(?:at|@|around|from|till|until)\s*(\d{1,2})\s?h`), applyHourOnly, []string{"#h", "# h"}},
	{rClockH, span(`(\d{1,2})[:.](\d{2})\s?(?:h|hrs|hours|uhr)`), applyClockH, []string{"#h", "# h", "hrs", "hours", "uhr"}},
}

// validForm rejects the eager matches of the clock forms: four digits
// alone that are no time ("in 2026", "room 1530"), a clock time with
// "hours" that is an amount ("in 2:30 hours").
func validForm(id ruleID, capt func(int) string, text string, left int) bool {
	switch id {
	case rMilitary:
		return capt(0) != "" || capt(3) != "" || strings.HasPrefix(capt(1), "0")
	case rClockH:
		return !reInBefore.MatchString(text[:left])
	}
	return true
}

func applyMilitary(sp *timeSpec, x ruleCtx) { setTime(sp, x.atoi(1), x.atoi(2), 0) }

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
