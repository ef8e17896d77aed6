package clockstate

import (
	"encoding/json"
	"strings"
	"testing"
)

// The phrases of issue 21's follow-up through `kairos clock parse`, said
// on Wednesday 25 November 2026 at 10:00 in Lisbon (UTC+0). Before, the
// first four were `"kind":"invalid","needs_clarification":false` and the
// last three a generic question.
func TestTyped_IssuePhrases(t *testing.T) {
	at := utc("2026-11-25T10:00:00Z")
	for _, tc := range []struct{ text, want string }{
		{"ten to five", `{"kind":"absolute","needs_clarification":true,"clarification_question":"Do you mean 4:50am or 4:50pm: 4:50 this afternoon or 4:50 tomorrow morning?"}`},
		{"ten to five pm", `{"kind":"absolute","start":"2026-11-25T16:50:00Z","needs_clarification":false}`},
		{"five to midnight", `{"kind":"absolute","start":"2026-11-25T23:55:00Z","needs_clarification":false}`},
		{"3ish", `{"kind":"absolute","needs_clarification":true,"clarification_question":"Do you mean 3am or 3pm: 3 this afternoon or 3 tomorrow morning?"}`},
		{"3ish tomorrow afternoon", `{"kind":"absolute","start":"2026-11-26T15:00:00Z","needs_clarification":false}`},
		{"next wk", `{"kind":"absolute","start":"2026-11-30T00:00:00Z","end":"2026-12-07T00:00:00Z","needs_clarification":false}`},
		{"in 20 or 30 mins", `{"kind":"relative","needs_clarification":true,"clarification_question":"Do you mean in 20 minutes or in 30 minutes?"}`},
		{"every second tuesday", `{"kind":"absolute","start":"2026-12-01T00:00:00Z","end":"2026-12-02T00:00:00Z","repeat":"FREQ=WEEKLY;INTERVAL=2;BYDAY=TU","needs_clarification":false}`},
		{"first thing monday", `{"kind":"absolute","start":"2026-11-30T06:00:00Z","needs_clarification":false}`},
		{"after lunch", `{"kind":"absolute","start":"2026-11-25T14:00:00Z","end":"2026-11-25T18:00:00Z","needs_clarification":false}`},
	} {
		r, err := ParseCLI(tc.text, "Europe/Lisbon", at)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		if got := strings.ReplaceAll(string(b), "+00:00", "Z"); got != tc.want {
			t.Errorf("%q: %s\nwant %s", tc.text, got, tc.want)
		}
	}
}

// In free text the new forms need their context: no time is read from
// "the first thing I noticed", "ten to five people" or "5 to 10 minutes'
// walk", and the envelope reads "ten to five" as the rules do.
func TestTyped_EnvelopeNeedsContext(t *testing.T) {
	at := utc("2026-11-25T10:00:00Z")
	for _, text := range []string{"the first thing I noticed was the noise", "we were ten to five people",
		"it takes 5 to 10 minutes to walk there", "I ran for 20 or 30 mins"} {
		if r := parseAnchored(text, "Europe/Lisbon", nil, at); r.Kind != KindInvalid || r.NeedsClarification {
			t.Errorf("%q read as a time: %+v", text, r)
		}
	}
	for _, text := range []string{"see you at ten to five", "let's meet around 3ish", "ping me first thing monday", "call me after lunch"} {
		if r := parseAnchored(text, "Europe/Lisbon", nil, at); r.Kind == KindInvalid {
			t.Errorf("%q: no time read: %+v", text, r)
		}
	}
}

// The envelope's quick skip is the rules' own hints: a text it skips is
// one no rule matches ("ten to five" was skipped by a word list kept
// apart from the rules).
func TestTyped_SkipNeverHidesARule(t *testing.T) {
	texts := []string{"ten to five", "twenty past three", "five to midnight", "3ish", "first thing", "after lunch"}
	for _, c := range loadCorpus(t) {
		texts = append(texts, c.text)
	}
	for _, text := range texts {
		if mayHaveTime(text) {
			continue
		}
		p := &parser{text: text, masked: []byte(text), ref: utc("2026-11-25T10:00:00Z"), whole: true}
		p.findMatches()
		if len(p.matches) > 0 {
			t.Errorf("%q is skipped but rule %d reads %q", text, p.matches[0].id, text[p.matches[0].left:p.matches[0].right])
		}
	}
}
