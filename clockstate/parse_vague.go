package clockstate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Vague phrases of issue 32 (item 7): "soonish", "later on", "later
// today", "at some point", "sometime" with no day, "the week after next"
// give no instant: each is a question naming what was said. "sometime"
// with one day ("sometime tomorrow") is that day. "a couple of days" and
// "a few days" offer the amount they most likely mean and ask the time.

const (
	rVague ruleID = iota + 600
	rWeekAfterNext
)

var vagueRules = []ruleRow{
	{rVague, span(`(soonish|soon|later\s+(?:on|today|tonight|this\s+(?:week|month|year|morning|afternoon|evening)|in\s+the\s+(?:day|week|month))|later|at\s+some\s+point|some\s*time|someday|one\s+of\s+these\s+days|eventually|shortly)`),
		applyVague, []string{"soon", "later", "some", "one of these", "eventually", "shortly"}},
	{rWeekAfterNext, span(`(?:the\s+)?(?:week|wk)\s+after\s+next`), applyWeekAfterNext, []string{"after next"}},
}

// validVague: "later" after an amount is the amount's ("2 hours later").
func validVague(id ruleID, capt func(int) string, text string, left int) bool {
	if id == rVague && strings.EqualFold(capt(0), "later") {
		return !reAmountBefore.MatchString(text[:left])
	}
	return true
}

var reAmountBefore = regexp.MustCompile(`(?i)(?:\d|` + reUnitWord + `)\s*$`)

func applyVague(sp *timeSpec, x ruleCtx) {
	sp.vague = strings.Join(strings.Fields(x.capt(0)), " ")
}

func applyWeekAfterNext(sp *timeSpec, x ruleCtx) {
	sp.window, sp.windowOff = "week", 2
	sp.question = "Which day and time of the week after next do you mean?"
}

// vagueQuestion is the question a vague word raises, "" when the spec
// says enough: "sometime" (or "at some point") with one day is that day.
func vagueQuestion(sp *timeSpec) string {
	if sp.vague == "" {
		return ""
	}
	some := strings.HasPrefix(sp.vague, "some") && sp.vague != "someday" || sp.vague == "at some point"
	if some && (sp.dateSet && !sp.monthOnly || sp.dayOffsetSet) && sp.window == "" && !sp.endDaySet {
		return ""
	}
	if some && sp.window != "" {
		return "Which day and time of " + windowName(sp) + " do you mean?"
	}
	return "When do you mean by " + strconv.Quote(sp.vague) + "? Please give a day and time, such as \"tomorrow at 5pm\" or \"in 2 hours\"."
}

func windowName(sp *timeSpec) string {
	switch {
	case sp.windowOff == 2 && sp.window == "week":
		return "the week after next"
	case sp.windowOff == 1:
		return "next " + sp.window
	case sp.windowOff == -1:
		return "last " + sp.window
	}
	return "this " + sp.window
}

// vagueAmount: "in a couple of days", "a few weeks": the amount offered,
// the time of day asked. Amounts of hours and less stand.
func vagueAmount(sp *timeSpec, amount, unit string, refL time.Time) {
	a := strings.ToLower(amount)
	if !strings.Contains(a, "couple") && !strings.Contains(a, "few") && !strings.Contains(a, "several") {
		return
	}
	n, _ := amountF(a)
	name := unitName(unit)
	switch name {
	case "day":
		d := refL.AddDate(0, 0, int(n))
		sp.question = "Do you mean in " + strconv.Itoa(int(n)) + " days, on " + d.Format("Monday 2 January") + "? At what time?"
	case "week", "month", "year", "fortnight":
		sp.question = "How many " + name + "s do you mean by " + strconv.Quote(strings.Join(strings.Fields(amount), " ")+" "+unit) + ", and which day and time?"
	}
}
