package clockstate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// ref is the fixed reference instant: Tuesday 2026-02-10 12:02 in Tokyo.
var ref = utc("2026-02-10T03:02:00Z")

func startOf(r ParseResult) string {
	if r.Start == nil {
		return ""
	}
	return r.Start.UTC().Format(time.RFC3339)
}

func endOf(r ParseResult) string {
	if r.End == nil {
		return ""
	}
	return r.End.UTC().Format(time.RFC3339)
}

// Relative phrases against a fixed reference instant: kind relative, with
// an instant, whatever the anchor.
func TestSection4_4_RelativePhrases(t *testing.T) {
	for _, tc := range []struct {
		text, tz string
		at       time.Time
		want     string
	}{
		{"in 2 hours", "", ref, "2026-02-10T05:02:00Z"},
		{"in 90 minutes", "", ref, "2026-02-10T04:32:00Z"},
		{"in 5 min", "", ref, "2026-02-10T03:07:00Z"},
		{"in 2h", "", ref, "2026-02-10T05:02:00Z"},
		{"in 45 seconds", "", ref, "2026-02-10T03:02:45Z"},
		{"in half an hour", "", ref, "2026-02-10T03:32:00Z"},
		{"in an hour", "", ref, "2026-02-10T04:02:00Z"},
		{"in a couple of hours", "", ref, "2026-02-10T05:02:00Z"},
		{"in a few minutes", "", ref, "2026-02-10T03:05:00Z"},
		{"2 hours from now", "", ref, "2026-02-10T05:02:00Z"},
		{"three days later", "", ref, "2026-02-13T03:02:00Z"},
		{"3 days ago", "", ref, "2026-02-07T03:02:00Z"},
		{"an hour ago", "", ref, "2026-02-10T02:02:00Z"},
		{"in 3 days", "Asia/Tokyo", ref, "2026-02-13T03:02:00Z"},
		{"in 2 weeks", "Asia/Tokyo", ref, "2026-02-24T03:02:00Z"},
		{"within 3 days", "", ref, "2026-02-13T03:02:00Z"},
		{"in 1 month", "UTC", utc("2026-01-31T10:00:00Z"), "2026-02-28T10:00:00Z"},
		{"in a year", "UTC", ref, "2027-02-10T03:02:00Z"},
		{"now", "", ref, "2026-02-10T03:02:00Z"},
		// Days are calendar days in the anchor: across New York's spring
		// forward "in 3 days" keeps the wall-clock time (71 h).
		{"in 3 days", "America/New_York", utc("2026-03-07T15:00:00Z"), "2026-03-10T14:00:00Z"},
		{"I'll call you back in 20 minutes", "", ref, "2026-02-10T03:22:00Z"},
	} {
		t.Run(tc.text+"@"+tc.tz, func(t *testing.T) {
			r := ParseAnchoredTime(tc.text, tc.tz, tc.at)
			if r.Kind != KindRelative || startOf(r) != tc.want || r.NeedsClarification {
				t.Errorf("ParseAnchoredTime(%q, %q) = %s %s (clarify %v), want relative %s", tc.text, tc.tz, r.Kind, startOf(r), r.NeedsClarification, tc.want)
			}
		})
	}
}

// §4.3: floating times never become instants without a Session TZ anchor.
func TestSection4_3_FloatingNeedsAnchor(t *testing.T) {
	for _, text := range []string{"9am", "tonight", "tomorrow 9am", "next friday", "at noon", "March 3", "tomorrow morning",
		"2026-03-08 09:00", "let's do 5:30pm", "next week", "midnight", "on 25/12"} {
		t.Run(text, func(t *testing.T) {
			r := ParseAnchoredTime(text, "", ref)
			if r.Kind != KindFloating || r.Start != nil || r.End != nil || !r.NeedsClarification || r.ClarificationQuestion == "" {
				t.Errorf("ParseAnchoredTime(%q, no tz) = %+v, want floating with a question and no instant", text, r)
			}
		})
	}
}

// Anchored to a Session TZ, floating expressions become absolute.
func TestSection4_3_AnchoredAbsolute(t *testing.T) {
	for _, tc := range []struct {
		text, tz   string
		at         time.Time
		start, end string
	}{
		{"9am", "Asia/Tokyo", ref, "2026-02-11T00:00:00Z", ""}, // 9am Tokyo already passed: the next one
		{"3pm", "Asia/Tokyo", ref, "2026-02-10T06:00:00Z", ""},
		{"today 9am", "Asia/Tokyo", ref, "2026-02-10T00:00:00Z", ""},
		{"tomorrow 9am", "Asia/Tokyo", ref, "2026-02-11T00:00:00Z", ""},
		{"tomorrow at 9:30 pm", "Asia/Tokyo", ref, "2026-02-11T12:30:00Z", ""},
		{"tonight", "Asia/Tokyo", ref, "2026-02-10T09:00:00Z", "2026-02-10T15:00:00Z"},
		{"tomorrow", "Asia/Tokyo", ref, "2026-02-10T15:00:00Z", "2026-02-11T15:00:00Z"},
		{"tomorrow morning", "Asia/Tokyo", ref, "2026-02-10T21:00:00Z", "2026-02-11T03:00:00Z"},
		{"next friday at 5pm", "Europe/Berlin", ref, "2026-02-13T16:00:00Z", ""},
		{"Sat at 10am", "UTC", ref, "2026-02-14T10:00:00Z", ""},
		{"noon", "Asia/Kolkata", ref, "2026-02-10T06:30:00Z", ""},
		{"at 9 in the morning", "UTC", ref, "2026-02-10T09:00:00Z", ""},
		{"at 14", "UTC", ref, "2026-02-10T14:00:00Z", ""},
		{"12am", "UTC", ref, "2026-02-11T00:00:00Z", ""},
		{"midnight", "UTC", ref, "2026-02-11T00:00:00Z", ""},
		{"3-5pm", "UTC", ref, "2026-02-10T15:00:00Z", "2026-02-10T17:00:00Z"},
		{"March 3", "UTC", ref, "2026-03-03T00:00:00Z", "2026-03-04T00:00:00Z"},
		{"January 5", "UTC", ref, "2027-01-05T00:00:00Z", "2027-01-06T00:00:00Z"}, // next occurrence
		{"march 3rd, 2027", "UTC", ref, "2027-03-03T00:00:00Z", "2027-03-04T00:00:00Z"},
		{"next week", "UTC", ref, "2026-02-16T00:00:00Z", "2026-02-23T00:00:00Z"},
		{"this weekend", "UTC", ref, "2026-02-14T00:00:00Z", "2026-02-16T00:00:00Z"},
		{"2026-03-08 09:00", "America/New_York", ref, "2026-03-08T13:00:00Z", ""},
		{"on 25/12", "UTC", ref, "2026-12-25T00:00:00Z", "2026-12-26T00:00:00Z"},
		// "tomorrow 9am" across spring forward: calendar day, wall clock kept.
		{"tomorrow 9am", "America/New_York", utc("2026-03-07T15:00:00Z"), "2026-03-08T13:00:00Z", ""},
		{"tomorrow 9am", "Europe/London", utc("2026-03-28T12:00:00Z"), "2026-03-29T08:00:00Z", ""},
		{"tomorrow 9am", "Australia/Lord_Howe", utc("2026-10-03T00:00:00Z"), "2026-10-03T22:00:00Z", ""},
	} {
		t.Run(tc.text+"@"+tc.tz, func(t *testing.T) {
			r := ParseAnchoredTime(tc.text, tc.tz, tc.at)
			if r.Kind != KindAbsolute || startOf(r) != tc.start || endOf(r) != tc.end || r.NeedsClarification {
				t.Errorf("ParseAnchoredTime(%q, %q) = %s start %s end %s (clarify %v %q), want absolute %s..%s",
					tc.text, tc.tz, r.Kind, startOf(r), endOf(r), r.NeedsClarification, r.ClarificationQuestion, tc.start, tc.end)
			}
			if r.Start != nil {
				if _, off := r.Start.Zone(); off != mustOffset(t, tc.tz, *r.Start) {
					t.Errorf("start %v is not expressed in %s", r.Start, tc.tz)
				}
			}
		})
	}
}

func mustOffset(t *testing.T, tz string, at time.Time) int {
	off, err := OffsetMinutes(tz, at)
	if err != nil {
		t.Fatal(err)
	}
	return off * 60
}

// DST gaps and folds inside parse_anchored_time follow the compatible rule.
func TestSection4_4_ParseDSTGapAndFold(t *testing.T) {
	for _, tc := range []struct {
		text, tz string
		want     string
		kind     LocalKind
	}{
		{"2026-03-08 02:30", "America/New_York", "2026-03-08T07:30:00Z", LocalSkipped},    // 03:30 EDT
		{"2026-11-01 01:30", "America/New_York", "2026-11-01T05:30:00Z", LocalRepeated},   // earlier: EDT
		{"2026-10-04 02:15", "Australia/Lord_Howe", "2026-10-03T15:45:00Z", LocalSkipped}, // half-hour gap
		{"2026-04-05 01:45", "Australia/Lord_Howe", "2026-04-04T14:45:00Z", LocalRepeated},
	} {
		r := ParseAnchoredTime(tc.text, tc.tz, ref)
		if r.Kind != KindAbsolute || startOf(r) != tc.want || r.Local != tc.kind {
			t.Errorf("%q in %s = %s %s (local %d), want %s (local %d)", tc.text, tc.tz, r.Kind, startOf(r), r.Local, tc.want, tc.kind)
		}
	}
	// "tomorrow 2:30am" on the eve of spring forward lands at 03:30 EDT.
	r := ParseAnchoredTime("tomorrow 2:30am", "America/New_York", utc("2026-03-07T15:00:00Z"))
	if got := r.Start.Format(ISOLayout); got != "2026-03-08T03:30:00-04:00" {
		t.Errorf("tomorrow 2:30am = %s", got)
	}
}

// An ISO-8601 timestamp with an offset is absolute without any anchor.
func TestSection4_4_AbsoluteTimestamps(t *testing.T) {
	r := ParseAnchoredTime("2026-02-10T12:02:00+09:00", "", ref)
	if r.Kind != KindAbsolute || r.Start.Format(time.RFC3339) != "2026-02-10T12:02:00+09:00" {
		t.Errorf("got %s %v", r.Kind, r.Start)
	}
	r = ParseAnchoredTime("deploy at 2026-02-10T03:00:00Z please", "Asia/Tokyo", ref)
	if r.Kind != KindAbsolute || r.Start.Format(time.RFC3339) != "2026-02-10T12:00:00+09:00" {
		t.Errorf("anchored rendering: %s %v", r.Kind, r.Start)
	}
}

// §4.2: a zone stated in the text anchors it; abbreviations are resolved
// from the user's known zone or asked about, never mapped silently.
func TestSection4_2_ExplicitZonesAndAbbreviations(t *testing.T) {
	for _, tc := range []struct {
		name, text, tz string
		kind           string
		start          string // RFC3339 with offset
		ask            string // substring of the question
	}{
		{"place time", "3pm Tokyo time", "", KindAbsolute, "2026-02-10T15:00:00+09:00", ""},
		{"place time over anchor", "3pm tokyo time", "Europe/Berlin", KindAbsolute, "2026-02-10T15:00:00+09:00", ""},
		{"utc offset", "9am UTC+5:30", "", KindAbsolute, "2026-02-10T09:00:00+05:30", ""},
		{"utc offset whole", "noon UTC+9", "", KindAbsolute, "2026-02-11T12:00:00+09:00", ""}, // 12:02 there: the next noon
		{"utc", "9am UTC", "", KindAbsolute, "2026-02-10T09:00:00Z", ""},
		{"iana in text", "noon Asia/Kathmandu", "", KindAbsolute, "2026-02-10T12:00:00+05:45", ""},
		{"EST unknown user", "9am EST", "", KindFloating, "", "EST"},
		{"JST read with its assumption", "9am JST", "", KindAbsolute, "2026-02-11T09:00:00+09:00", ""},
		{"CST chicago user", "9am CST", "America/Chicago", KindAbsolute, "2026-02-10T09:00:00-06:00", ""},
		{"CST china user", "9am CST", "Asia/Shanghai", KindAbsolute, "2026-02-11T09:00:00+08:00", ""},
		{"CST berlin user asks", "9am CST", "Europe/Berlin", KindFloating, "", "CST"},
		{"IST india user", "6pm IST", "Asia/Kolkata", KindAbsolute, "2026-02-10T18:00:00+05:30", ""},
		// Dublin uses IST only in summer; in February it is on GMT, so
		// "IST" there is asked about (the zone must use it at that date).
		{"IST dublin user in winter", "6pm IST", "Europe/Dublin", KindFloating, "", "IST"},
		{"EST new york user in winter", "9am EST", "America/New_York", KindAbsolute, "2026-02-10T09:00:00-05:00", ""},
		{"IST unknown user", "6pm IST", "America/New_York", KindFloating, "", "Asia/Kolkata"},
		{"PST LA user", "9am PST", "America/Los_Angeles", KindAbsolute, "2026-02-10T09:00:00-08:00", ""},
		{"PT after time", "10am PT", "America/Los_Angeles", KindAbsolute, "2026-02-10T10:00:00-08:00", ""},
		{"relative ignores abbreviation", "in 2 hours EST", "", KindRelative, "2026-02-10T05:02:00Z", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseAnchoredTime(tc.text, tc.tz, ref)
			got := ""
			if r.Start != nil {
				got = r.Start.Format(time.RFC3339)
			}
			if r.Kind != tc.kind || got != tc.start {
				t.Fatalf("ParseAnchoredTime(%q, %q) = %s %s, want %s %s (q=%q)", tc.text, tc.tz, r.Kind, got, tc.kind, tc.start, r.ClarificationQuestion)
			}
			if tc.ask != "" && (!r.NeedsClarification || !strings.Contains(r.ClarificationQuestion, tc.ask)) {
				t.Errorf("question %q (needs %v), want one mentioning %q", r.ClarificationQuestion, r.NeedsClarification, tc.ask)
			}
			if tc.ask == "" && r.NeedsClarification {
				t.Errorf("unexpected question %q", r.ClarificationQuestion)
			}
		})
	}
}

func TestSection4_4_AmbiguousAndInvalid(t *testing.T) {
	for _, tc := range []struct {
		text, tz string
		kind     string
		clarify  bool
		named    string // a word the question must name
	}{
		{"at 9", "UTC", KindAbsolute, true, ""},    // am or pm?
		{"on 11/3", "UTC", KindAbsolute, true, ""}, // 11 March or November 3?
		{"hello there", "UTC", KindInvalid, false, ""},
		{"", "UTC", KindInvalid, false, ""},
		{"the sun is up", "UTC", KindInvalid, false, ""}, // not Sunday
		{"I may go", "UTC", KindInvalid, false, ""},      // not May
		{"good morning", "UTC", KindInvalid, false, ""},  // a greeting
		// Not times, but the whole text was given as one: never a silent
		// invalid while it holds a time word (a number, a unit, a date).
		{"2 a day", "UTC", KindInvalid, true, `"2"`},             // not 2am
		{"10-20 people", "UTC", KindInvalid, true, `"10-20"`},    // not 10:20
		{"1/2 cup of flour", "UTC", KindInvalid, true, `"1/2"`},  // not 1 February
		{"Feb 30", "UTC", KindInvalid, true, `"Feb 30"`},         // no such day
		{"2026-13-01", "UTC", KindInvalid, true, `"2026-13-01"`}, // no such month
		{"9am", "Not/AZone", KindInvalid, true, `"Not/AZone"`},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r := ParseAnchoredTime(tc.text, tc.tz, ref)
			if r.Kind != tc.kind || r.NeedsClarification != tc.clarify || r.Start != nil || !strings.Contains(r.ClarificationQuestion, tc.named) {
				t.Errorf("ParseAnchoredTime(%q) = %+v, want kind %s clarify %v naming %s and no instant", tc.text, r, tc.kind, tc.clarify, tc.named)
			}
		})
	}
}

// CONTRACT.md `kairos clock parse`: exactly these JSON keys, RFC 3339 with
// offset, absent fields omitted, needs_clarification always present.
func TestContract_ClockParseJSON(t *testing.T) {
	for _, tc := range []struct {
		text, tz string
		want     string
	}{
		{"tomorrow 9am", "Asia/Tokyo", `{"kind":"absolute","start":"2026-02-11T09:00:00+09:00","needs_clarification":false}`},
		{"tonight", "Asia/Tokyo", `{"kind":"absolute","start":"2026-02-10T18:00:00+09:00","end":"2026-02-11T00:00:00+09:00","needs_clarification":false}`},
		{"in 2 hours", "", `{"kind":"relative","start":"2026-02-10T05:02:00Z","needs_clarification":false}`},
		{"nothing here", "", `{"kind":"invalid","needs_clarification":false}`},
	} {
		r, err := ParseCLI(tc.text, tc.tz, ref)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		if string(b) != tc.want {
			t.Errorf("%q: %s\nwant %s", tc.text, b, tc.want)
		}
	}
	r, _ := ParseCLI("9am", "", ref)
	var m map[string]any
	b, _ := json.Marshal(r)
	json.Unmarshal(b, &m)
	if m["kind"] != "floating" || m["needs_clarification"] != true || m["clarification_question"] == "" || m["start"] != nil {
		t.Errorf("floating JSON = %s", b)
	}
	if _, err := ParseCLI("9am", "EST", ref); err == nil {
		t.Error("ParseCLI accepted --tz EST")
	}
}

func FuzzParseAnchoredTime(f *testing.F) {
	for _, s := range []string{"tomorrow 9am", "in 2 hours", "9am EST", "3pm Tokyo time", "2026-03-08 02:30", "on 11/3",
		"next friday at 5pm", "UTC+5:30 noon", "3-5pm", "March 3rd, 2027", "at 9", "2026-02-10T12:02:00+09:00", "in a couple of hours",
		"this weekend", "half an hour ago", "midnight Asia/Kathmandu", "12:99", "99/99/9999", "in 99999 years"} {
		f.Add(s, "Asia/Tokyo", int64(1770692520))
		f.Add(s, "", int64(0))
	}
	zones := []string{"", "UTC", "Asia/Tokyo", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "bogus"}
	f.Fuzz(func(t *testing.T, text, tz string, sec int64) {
		if !utf8.ValidString(tz) || len(tz) > 40 {
			tz = ""
		}
		if sec < -1e10 || sec > 1e10 {
			sec %= 1e10
		}
		r := ParseAnchoredTime(text, zones[int(uint64(sec)%uint64(len(zones)))], time.Unix(sec, 0).UTC())
		switch r.Kind {
		case KindAbsolute, KindRelative, KindFloating, KindInvalid:
		default:
			t.Fatalf("kind %q", r.Kind)
		}
		if r.Kind == KindFloating && (r.Start != nil || !r.NeedsClarification) {
			t.Fatalf("floating with an instant or no question: %+v", r)
		}
		if r.Kind == KindRelative && r.Start == nil {
			t.Fatalf("relative without an instant: %+v", r)
		}
		if r.Start != nil && r.End != nil && r.End.Before(*r.Start) {
			t.Fatalf("end before start: %+v", r)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		_ = ParseAnchoredTime(text, tz, time.Unix(sec, 0))
	})
}

func ExampleParseAnchoredTime() {
	ref := time.Date(2026, 3, 7, 15, 0, 0, 0, time.UTC) // Saturday 10:00 in New York
	for _, text := range []string{"tomorrow 9am", "in 2 hours", "9am"} {
		r := ParseAnchoredTime(text, "America/New_York", ref)
		fmt.Println(text, "→", r.Kind, r.Start.Format(time.RFC3339))
	}
	r := ParseAnchoredTime("9am", "", ref)
	fmt.Println("9am without a zone →", r.Kind, r.NeedsClarification)
	// Output:
	// tomorrow 9am → absolute 2026-03-08T09:00:00-04:00
	// in 2 hours → relative 2026-03-07T12:00:00-05:00
	// 9am → absolute 2026-03-08T09:00:00-04:00
	// 9am without a zone → floating true
}

func ExampleResolveLocal() {
	ny, _ := LoadTZ("America/New_York")
	gap, _ := ResolveLocal(ny, 2026, time.March, 8, 2, 30, 0)
	fold, _ := ResolveLocal(ny, 2026, time.November, 1, 1, 30, 0)
	fmt.Println(gap.Format(ISOLayout))
	fmt.Println(fold.Format(ISOLayout))
	// Output:
	// 2026-03-08T03:30:00-04:00
	// 2026-11-01T01:30:00-04:00
}

func ExampleFormatElapsed() {
	fmt.Println(FormatElapsed(48*time.Hour), FormatElapsed(3*time.Hour+15*time.Minute))
	// Output: P2D PT3H15M
}
