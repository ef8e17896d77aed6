package clockstate

import (
	"strings"
	"testing"
	"time"
)

// The classes of issue 32, one table each: items 1 to 7 of the issue.
// Expected instants are worked out by hand from the reference (Wednesday
// 15 July 2026, 10:00 UTC; 11:00 in London) and the zone's rules.

// classCase is one phrase of a class. want is "ask:<words the question
// holds>" or "<RFC 3339 start>[|<end>][ repeat:<RRULE>]"; assume, when
// set, is what the assumptions must mention.
type classCase struct {
	text, tz, at string
	want, assume string
}

const classRef = "2026-07-15T10:00:00Z"

// classFails says what is wrong with the result for c ("" when right).
func classFails(c classCase) string {
	at := classRef
	if c.at != "" {
		at = c.at
	}
	ref, _ := time.Parse(time.RFC3339, at)
	tz := c.tz
	if tz == "" {
		tz = "Europe/London"
	}
	if tz == "-" {
		tz = ""
	}
	r := ParseAnchoredTime(c.text, tz, ref)
	got := r.Kind + " " + rfc(r.Start) + "|" + rfc(r.End) + " repeat:" + r.Repeat + " q:" + r.ClarificationQuestion + " assume:" + strings.Join(r.Assumptions, "; ")
	if q, ok := strings.CutPrefix(c.want, "ask:"); ok {
		if !r.NeedsClarification || r.Start != nil {
			return got
		}
		for _, w := range strings.Split(q, "|") {
			if !strings.Contains(strings.ToLower(r.ClarificationQuestion), strings.ToLower(w)) {
				return got
			}
		}
		return ""
	}
	want, rep, _ := strings.Cut(c.want, " repeat:")
	start, end, _ := strings.Cut(want, "|")
	if r.NeedsClarification || rfc(r.Start) != start || rfc(r.End) != end || r.Repeat != rep {
		return got
	}
	if c.assume != "" && !strings.Contains(strings.ToLower(strings.Join(r.Assumptions, "; ")), strings.ToLower(c.assume)) {
		return got
	}
	return ""
}

func rfc(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(time.RFC3339)
}

// runClass runs one class's table, logs its count and fails each wrong case.
func runClass(t *testing.T, name string, cases []classCase) {
	t.Helper()
	pass := 0
	for _, c := range cases {
		if bad := classFails(c); bad != "" {
			t.Errorf("%s: %q tz=%q: got %s; want %s (assume %q)", name, c.text, c.tz, bad, c.want, c.assume)
			continue
		}
		pass++
	}
	t.Logf("%s: %d/%d", name, pass, len(cases))
}

// Item 1: a word that is neither vocabulary, a number nor a sentence word,
// inside the expression or right beside it, is asked about by name.
var class1 = []classCase{
	{text: "quux 5pm", want: "ask:quux"},
	{text: "5pm quux", want: "ask:quux"},
	{text: "5pm in Zorbania", want: "ask:Zorbania"},
	{text: "at 9am flibber", want: "ask:flibber"},
	{text: "noon Zorbania time", want: "ask:Zorbania"},
	{text: "tomorrow blorp at 5pm", want: "ask:blorp"},
	{text: "remind me to call Bob at 5pm", want: "2026-07-15T17:00:00+01:00"},
	{text: "please remind me tomorrow at 9am to take the bins out", want: "2026-07-16T09:00:00+01:00"},
	{text: "the meeting is at 3pm", want: "2026-07-15T15:00:00+01:00"},
	{text: "dentist appointment on friday at 10am", want: "2026-07-17T10:00:00+01:00"},
	{text: "call mum at 6pm please", want: "2026-07-15T18:00:00+01:00"},
}

// Item 2: typos within a small edit distance of one word are read as it,
// with the assumption stated; two candidates ask; txt-speak is vocabulary.
var class2 = []classCase{
	{text: "wedensday 10am", want: "2026-07-22T10:00:00+01:00", assume: "wedensday"},
	{text: "tommorow at 8am", want: "2026-07-16T08:00:00+01:00"},
	{text: "satruday", want: "2026-07-18T00:00:00+01:00|2026-07-19T00:00:00+01:00", assume: "satruday"},
	{text: "thrusday at 3pm", want: "2026-07-16T15:00:00+01:00", assume: "thrusday"},
	{text: "febuary 3rd at noon", want: "2027-02-03T12:00:00Z", assume: "febuary"},
	{text: "mnoday at 9am", want: "2026-07-20T09:00:00+01:00", assume: "mnoday"},
	{text: "tomorow mornign", want: "2026-07-16T06:00:00+01:00|2026-07-16T12:00:00+01:00", assume: "mornign"},
	{text: "tursday at 3pm", want: "ask:tuesday|thursday"},
	{text: "tmr at 5pm", want: "2026-07-16T17:00:00+01:00"},
	{text: "2nite at 9", want: "2026-07-15T21:00:00+01:00"},
	{text: "nxt friday at 5pm", want: "2026-07-17T17:00:00+01:00"},
	{text: "2day at 4pm", want: "2026-07-15T16:00:00+01:00"},
	{text: "in 20 mins pls", want: "2026-07-15T11:20:00+01:00"},
	{text: "the wk after nxt", want: "ask:week after next"},
}

// Item 3: places from the zone database's names and an alias table, zone
// words and abbreviations; an unknown place is a question.
var class3 = []classCase{
	{text: "noon Tokyo time", want: "2026-07-16T12:00:00+09:00"},
	{text: "3pm in Lisbon", want: "2026-07-15T15:00:00+01:00"},
	{text: "3pm Tbilisi time", want: "2026-07-15T15:00:00+04:00"},
	{text: "1pm in Windhoek", want: "2026-07-15T13:00:00+02:00"},
	{text: "9am west coast", tz: "America/New_York", want: "2026-07-15T09:00:00-07:00", assume: "west coast"},
	{text: "9am west coast", want: "ask:west coast"},
	{text: "10:00 CEST", want: "2026-07-16T10:00:00+02:00", assume: "CEST"},
	{text: "9am JST", tz: "-", want: "2026-07-16T09:00:00+09:00", assume: "JST"},
	{text: "5pm my time", want: "2026-07-15T17:00:00+01:00"},
	{text: "5pm your time", want: "ask:your time"},
	{text: "10am EST", want: "ask:EST"},
	{text: "5pm in Springfield", want: "ask:Springfield"},
}

// Item 4: clock forms.
var class4 = []classCase{
	{text: "at 0645", want: "2026-07-16T06:45:00+01:00"},
	{text: "1900 hrs", want: "2026-07-15T19:00:00+01:00"},
	{text: "0700 hours", want: "2026-07-16T07:00:00+01:00"},
	{text: "19h00", want: "2026-07-15T19:00:00+01:00"},
	{text: "at 18h", want: "2026-07-15T18:00:00+01:00"},
	{text: "19:00h", want: "2026-07-15T19:00:00+01:00"},
	{text: "7pm sharp", want: "2026-07-15T19:00:00+01:00"},
	{text: "7 o'clock sharp", want: "ask:7am or 7pm"},
	{text: "at 7.30pm", want: "2026-07-15T19:30:00+01:00"},
	{text: "at 19.30", want: "2026-07-15T19:30:00+01:00"},
	{text: "7h30", want: "2026-07-16T07:30:00+01:00"},
}

// Item 5: repeat rules with their RRULE and first future occurrence.
var class5 = []classCase{
	{text: "the second wednesday of every month at 9am", want: "2026-08-12T09:00:00+01:00| repeat:FREQ=MONTHLY;BYDAY=2WE"},
	{text: "last thursday monthly at 6pm", want: "2026-07-30T18:00:00+01:00| repeat:FREQ=MONTHLY;BYDAY=-1TH"},
	{text: "the last friday of every month at 5pm", want: "2026-07-31T17:00:00+01:00| repeat:FREQ=MONTHLY;BYDAY=-1FR"},
	{text: "every 1st at 9am", want: "2026-08-01T09:00:00+01:00| repeat:FREQ=MONTHLY;BYMONTHDAY=1"},
	{text: "on the 15th of every month at noon", want: "2026-07-15T12:00:00+01:00| repeat:FREQ=MONTHLY;BYMONTHDAY=15"},
	{text: "tue-thu at 8am", want: "2026-07-16T08:00:00+01:00| repeat:FREQ=WEEKLY;BYDAY=TU,WE,TH"},
	{text: "every other monday at 9am", want: "2026-07-20T09:00:00+01:00| repeat:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO"},
	{text: "twice a week", want: "ask:which"},
	{text: "twice a week on mon and thu at 9am", want: "2026-07-16T09:00:00+01:00| repeat:FREQ=WEEKLY;BYDAY=MO,TH"},
}

// Item 6 (the parser's part): a date alone is a day, never a time.
var class6 = []classCase{
	{text: "on the 3rd", want: "2026-08-03T00:00:00+01:00|2026-08-04T00:00:00+01:00"},
	{text: "friday", want: "2026-07-17T00:00:00+01:00|2026-07-18T00:00:00+01:00"},
	{text: "sometime tomorrow", want: "2026-07-16T00:00:00+01:00|2026-07-17T00:00:00+01:00"},
}

// Item 7: vague phrases ask, and specifically.
var class7 = []classCase{
	{text: "the week after next sometime", want: "ask:week after next"},
	{text: "in a couple of days", want: "ask:2 days"},
	{text: "later on", want: "ask:later"},
	{text: "soonish", want: "ask:soonish"},
	{text: "05/06", tz: "UTC", want: "ask:5 June or 6 May"},
	{text: "at 7", at: "2026-07-15T17:30:00Z", want: "ask:7 this evening or 7 tomorrow morning"},
	{text: "sometime next week", want: "ask:next week"},
	{text: "later today", want: "ask:later today"},
}

func TestIssue32Class1UnknownWords(t *testing.T) { runClass(t, "item 1 unknown words", class1) }
func TestIssue32Class2Typos(t *testing.T)        { runClass(t, "item 2 typos", class2) }
func TestIssue32Class3Places(t *testing.T)       { runClass(t, "item 3 places and zones", class3) }
func TestIssue32Class4ClockForms(t *testing.T)   { runClass(t, "item 4 clock forms", class4) }
func TestIssue32Class5Repeats(t *testing.T)      { runClass(t, "item 5 repeats", class5) }
func TestIssue32Class6DateAlone(t *testing.T)    { runClass(t, "item 6 date alone", class6) }
func TestIssue32Class7Vague(t *testing.T)        { runClass(t, "item 7 vague", class7) }
