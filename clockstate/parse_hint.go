package clockstate

import (
	"strings"
	"unicode/utf8"
)

// The rule table's gate (doc/design.md "Time parser"): a rule's regexp
// runs only when its hint words occur in the lower-cased text. The hints
// of every rule are looked up once per phrase in one pass (hintBits), and
// each rule's gate is then a few mask tests, instead of a substring search
// per hint per rule.
//
// A rule's hint list holds groups of alternatives: any one of a group
// must occur ("#": a digit, "#x": a digit directly followed by x, "###"
// and "####": three and four digits in a row); "&" starts the next group. ruleNeeds adds groups that only skip work: each
// lists words of which a match must contain one (in any case), so a text
// without them cannot match. They are ignored when the text holds "ſ"
// (U+017F), which (?i) matches as "s" but lower-casing leaves as it is;
// the one other such rune, the Kelvin sign, lower-cases to "k".

// ruleNeeds are the speed-only groups, per rule: words of the rule's own
// regexp outside any optional part, so that every match holds one.
var ruleNeeds = map[ruleID][]string{
	// "day after tomorrow", "day before yesterday".
	rRelDay2: {"after", "before", "&", "tomorrow", "tmr", "yesterday"},
	// "in 2 hours": olebedev's Deadline names its unit in full.
	rDeadline: {"sec", "min", "hour", "day", "week", "month", "year"},
	// "in 20m", "in 2 hours", "in a couple of hours": a unit right after the number.
	rCompactIn: {"#s", "#m", "#h", "#d", "#w", "#y", "# s", "# m", "# h", "# d", "# w", "# y", "couple"},
	// "in 20 or 30 mins", "in a day or two": two amounts, or "two"/"three".
	rAmountOr: {"#", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
		"fifteen", "twenty", "thirty", "forty", "fifty", "sixty", "ninety"},
	// "in 5": a number, "a bit", "a while", "a little while", "a few".
	rInBare: {"#", "bit", "while", "few"},
	// "2 weeks from now", "3 days later".
	rFromNow: {"now", "later", "hence"},
	// "3 days from friday": a unit and a day.
	rShiftFrom: {"day", "week", "&", "mon", "tue", "wed", "thu", "fri", "sat", "sun", "tomorrow", "today"},
	// Every form of rShiftOn ends with a day word.
	rShiftOn: {"mon", "tue", "wed", "thu", "fri", "sat", "sun", "today", "tomorrow", "tonight"},
	// "between monday and wednesday".
	rDayRange: {"mon", "tue", "wed", "thu", "fri", "sat", "sun"},
	// "the thursday after next".
	rAfterNext: {"next", "&", "mon", "tue", "wed", "thu", "fri", "sat", "sun"},
	// "tuesday week".
	rDayWeek: {"mon", "tue", "wed", "thu", "fri", "sat", "sun"},
	// A year, or a four-digit time ("at 0645"): "March 3, 2027", "June 2027", "3.3.2027", "2027/3/3", "3-3-2027", "3/3/2027".
	rDateYear: {"####"}, rMonthYear: {"####"}, rMilitary: {"####"}, rDotDate: {"####"}, rYMDSlash: {"####"}, rDashDate: {"####"}, rSlashYear: {"####"},
	// "tmrw", "tomoz", "2moro(w)", "2morrow", "tomorow", "tommorow", "tommorrow".
	rTmrw: {"tmrw", "tomoz", "2mor", "tomorow", "tommor"},
	// "330 p.m.", "at 730": two digits in a row, and a suffix or a lead word.
	rThreeDigit: {"###", "&", "am", "pm", "a.", "p.", "at", "@", "around", "about"},
	// "in 2 hours", "90 mins", "2h", "a few days": a unit.
	rDuration: {"sec", "min", "hour", "hr", "day", "week", "wk", "fortnight", "month", "year", "yr",
		"#h", "#m", "#s", "#d", "#w", " h", " m", " s", " d", " w"},
	// "three am", "3 o'clock pm": an hour word or "clock".
	rHourAmPm: {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "clock"},
	// "last Monday of March": a weekday and a month.
	rNthOfMonth: {"mon", "tue", "wed", "thu", "fri", "sat", "sun", "&", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
		"&", " of ", " in "},
	// "the second wednesday of every month": a weekday.
	rNthWeekday: {"mon", "tue", "wed", "thu", "fri", "sat", "sun", "&", "first", "1st", "second", "2nd", "third", "3rd", "fourth", "4th",
		"fifth", "5th", "last", "final"},
	// "tue-thu": a weekday; "every 1st": an ordinal in digits; "19:00h": a clock time.
	rDayDash: {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, rEveryNth: {"#st", "#nd", "#rd", "#th"}, rClockH: {"#:", "#."},
	rHourOnly: {"at", "@", "around", "from", "till", "until"},
	// "5pm", "5 a.m.": a digit, then "a" or "p".
	rHour: {"#a", "#p", "# a", "# p"},
	// "quarter past 3", "ten to five", "20 minutes to 4": the minutes.
	rQuarter: {"quarter", "half", "five", "ten", "twenty", "minute", "# past", "# after", "# to", "# before", "# till", "# of"},
}

// hintText is the text hints are looked up in: lower case, each run of
// white space one space (a rule's \s+ reads a tab or two spaces as " at "
// does one), padded with a space at each end so a hint may ask for whole
// words.
func hintText(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			s = strings.ToLower(s) // rare: the byte loop below lower-cases ASCII only
			break
		}
	}
	b := make([]byte, 1, len(s)+2)
	b[0] = ' '
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			space = true
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(append(b, ' '))
}

// hintBits is the set of hint words found in one phrase, by index.
type hintBits [4]uint64

func (b *hintBits) set(i int) { b[i/64] |= 1 << (i % 64) }

// any says whether b holds one of mask's hints.
func (b *hintBits) any(mask *hintBits) bool {
	return b[0]&mask[0]|b[1]&mask[1]|b[2]&mask[2]|b[3]&mask[3] != 0
}

// hintTable is every hint word of the rule table, indexed for a one-pass
// lookup, and each rule's groups as masks over it.
type hintTable struct {
	words     []string
	digit     int     // the index of "#", -1 when no rule uses it
	digits4   int     // the index of "####", -1 when none
	digits3   int     // the index of "###", -1 when none
	byFirst   [][]int // plain hints by their first byte
	afterDig  [][]int // "#x" hints (x stored) by x's first byte
	gates     [][]hintBits
	needs     [][]hintBits
	indexByID map[string]int
}

var hints = buildHintTable()

func buildHintTable() *hintTable {
	t := &hintTable{digit: -1, digits4: -1, digits3: -1, byFirst: make([][]int, 256), afterDig: make([][]int, 256), indexByID: map[string]int{}}
	t.gates = make([][]hintBits, len(allRules))
	t.needs = make([][]hintBits, len(allRules))
	for i, r := range allRules {
		t.gates[i] = t.groups(r.hint)
		t.needs[i] = t.groups(ruleNeeds[r.id])
	}
	return t
}

// groups compiles a hint list into one mask per group.
func (t *hintTable) groups(hint []string) []hintBits {
	if len(hint) == 0 {
		return nil
	}
	out := []hintBits{{}}
	for _, h := range hint {
		if h == "&" {
			out = append(out, hintBits{})
			continue
		}
		out[len(out)-1].set(t.index(h))
	}
	return out
}

func (t *hintTable) index(h string) int {
	if i, ok := t.indexByID[h]; ok {
		return i
	}
	i := len(t.words)
	if i >= 64*len(hintBits{}) {
		panic("clockstate: too many distinct rule hints")
	}
	t.words = append(t.words, h)
	t.indexByID[h] = i
	switch {
	case h == "#":
		t.digit = i
	case h == "####":
		t.digits4 = i
	case h == "###":
		t.digits3 = i
	case h[0] == '#':
		t.afterDig[h[1]] = append(t.afterDig[h[1]], i)
	default:
		t.byFirst[h[0]] = append(t.byFirst[h[0]], i)
	}
	return i
}

// scan finds the hints occurring in lo (the lower-cased text); hasDigit
// says whether the text holds a digit ("#").
func (t *hintTable) scan(lo string, hasDigit bool) hintBits {
	var b hintBits
	if hasDigit && t.digit >= 0 {
		b.set(t.digit)
	}
	run := 0 // digits in a row
	for k := 0; k < len(lo); k++ {
		run++
		if !isDigit(lo[k]) {
			run = 0
		}
		if run == 4 && t.digits4 >= 0 {
			b.set(t.digits4)
		}
		if run == 3 && t.digits3 >= 0 {
			b.set(t.digits3)
		}
		for _, i := range t.byFirst[lo[k]] {
			w := t.words[i]
			// The second byte first: most candidates end there.
			if len(w) > 1 && (k+1 >= len(lo) || lo[k+1] != w[1]) {
				continue
			}
			if len(lo)-k >= len(w) && lo[k:k+len(w)] == w {
				b.set(i)
			}
		}
		if hasDigit && k > 0 && isDigit(lo[k-1]) {
			for _, i := range t.afterDig[lo[k]] {
				if strings.HasPrefix(lo[k:], t.words[i][1:]) {
					b.set(i)
				}
			}
		}
	}
	return b
}

// allOf says whether every group has one of its hints in b (true when
// there are no groups).
func allOf(groups []hintBits, b *hintBits) bool {
	for i := range groups {
		if !b.any(&groups[i]) {
			return false
		}
	}
	return true
}

// gate says whether rule i may match: its hints, and, unless noNeeds, its
// needs.
func (t *hintTable) gate(i int, b *hintBits, noNeeds bool) bool {
	return allOf(t.gates[i], b) && (noNeeds || allOf(t.needs[i], b))
}
