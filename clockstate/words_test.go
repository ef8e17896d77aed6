package clockstate

import (
	"strings"
	"testing"
)

// Item 1 of issue 32, as a property: for every corpus phrase read as a
// confident instant, an unknown word put right before or right after the
// expression makes the result a question naming it.
func TestUnknownWordBesideAlwaysAsks(t *testing.T) {
	checked, cases := 0, loadCorpus(t)
	for i := 0; i < len(cases); i += sampleStep() {
		c := cases[i]
		r := ParseAnchoredTime(c.text, c.tz, c.ref)
		at := strings.Index(r.read, r.Phrase)
		if r.Start == nil || r.NeedsClarification || r.Phrase == "" || at < 0 {
			continue
		}
		u := metaUnknown[i%len(metaUnknown)]
		for _, v := range []string{r.read[:at] + u + " " + r.read[at:], r.read[:at+len(r.Phrase)] + " " + u + r.read[at+len(r.Phrase):]} {
			checked++
			got := ParseAnchoredTime(v, c.tz, c.ref)
			if !got.NeedsClarification || got.Start != nil || !strings.Contains(got.ClarificationQuestion, `"`+u) {
				t.Errorf("%q (line %d): %s %s q=%q, want a question naming %q", v, c.line, got.Kind, startOf(got), got.ClarificationQuestion, u)
			}
		}
	}
	t.Logf("%d phrases with an unknown word beside the expression", checked)
}

// The sentence words are what a sentence around a time may hold: next to
// a time none is asked about, and none is vocabulary or a typo target.
func TestSentenceWordsBesideATime(t *testing.T) {
	for w := range sentenceWords {
		if vocabulary[w] || nearMisses[w] {
			continue // "may", "this": time words first; near misses: TestNearMissBesideAsks
		}
		for _, text := range []string{"remind me to " + w + " tomorrow at 5pm", "tomorrow at 5pm " + w} {
			r := ParseAnchoredTime(text, "Europe/London", utc(classRef))
			if strings.Contains(r.ClarificationQuestion, `"`+w+`"`) {
				t.Errorf("%q: %q", text, r.ClarificationQuestion)
			}
		}
	}
}

// Item 2 of issue 32, on the vocabulary itself: a typo of a typo target
// (a letter dropped, or two neighbours swapped) that is not itself a
// known word is read as its own word or asked about (two readings), never
// read as a word of another meaning.
func TestTypoOfATargetIsNeverAnotherWord(t *testing.T) {
	group := map[string]int{}
	for _, tt := range typoTargets {
		group[tt.word] = tt.group
	}
	read, asked := 0, 0
	for _, tt := range typoTargets {
		w := tt.word
		for k := 0; k+1 < len(w); k++ {
			swapped := []byte(w)
			swapped[k], swapped[k+1] = swapped[k+1], swapped[k]
			for _, typo := range []string{w[:k] + w[k+1:], string(swapped)} {
				if typo == w || vocabulary[typo] || sentenceWords[typo] || nearMisses[typo] || len(typo) < 3 {
					continue
				}
				class, words, _ := classifyWord(typo)
				switch {
				case class == wordTwo:
					asked++
				case class == wordRewrite && group[words[0]] == tt.group:
					read++
				case class == wordRewrite:
					t.Errorf("%q (a typo of %q) read as %q", typo, w, words[0])
				}
			}
		}
	}
	t.Logf("typos of the targets: %d read as their word, %d asked", read, asked)
}

// Txt-speak is vocabulary: each spelling reads as its word.
func TestTxtSpeakReadsAsItsWord(t *testing.T) {
	for w, word := range txtSpeak {
		if got := normalizeWords("at 5pm " + w).text; got != "at 5pm "+word {
			t.Errorf("%q: %q", w, got)
		}
	}
}

// Item 6 of issue 32, the parser's part: a date alone is a day (DayOnly),
// never a time; a time of day, a part of day or "end of day" is not.
func TestDayOnly(t *testing.T) {
	for text, want := range map[string]bool{"friday": true, "on the 3rd": true, "sometime tomorrow": true, "next week": true,
		"December 3": true, "end of the month": true, "friday at 5pm": false, "tomorrow morning": false, "end of day": false,
		"in 2 days": false, "every sunday": true, "every sunday at 9am": false} {
		r := ParseAnchoredTime(text, "Europe/London", utc(classRef))
		if r.Start == nil || r.DayOnly != want {
			t.Errorf("%q: start %v DayOnly %v, want %v", text, r.Start, r.DayOnly, want)
		}
	}
}

// A real word one edit from a time word, right beside the expression, is
// asked about ("his morning" was this morning's tomorrow; "very other
// friday" a one-off).
func TestNearMissBesideAsks(t *testing.T) {
	for text, want := range map[string]string{"his morning": `"this" by "his"`, "very friday at 5pm": `"every" by "very"`,
		"end of the moth at 9am": `by "moth"`, "very other friday at 5pm": `"other"`, "fist thing monday": `"thing"`} {
		r := ParseAnchoredTime(text, "Europe/London", utc(classRef))
		if !r.NeedsClarification || !strings.Contains(r.ClarificationQuestion, want) {
			t.Errorf("%q: %s %q, want a question with %s", text, startOf(r), r.ClarificationQuestion, want)
		}
	}
	// Away from the expression they are words like any other.
	if r := ParseAnchoredTime("turn the light off at 11pm", "Europe/London", utc(classRef)); r.Start == nil || r.NeedsClarification {
		t.Errorf("light: %q", r.ClarificationQuestion)
	}
}

// Places of the zone database are read however they are written: with
// hyphens or spaces, in any case; a mentioned place is the alias table's.
func TestZoneCityForms(t *testing.T) {
	for _, text := range []string{"9am in Port-au-Prince", "9am in port au prince", "9am Porto-Novo time", "noon in São Paulo", "5pm in St. Louis"} {
		if r := ParseAnchoredTime(text, "Europe/London", utc(classRef)); r.Start == nil || r.NeedsClarification || r.TZ == "Europe/London" {
			t.Errorf("%q: %s %q tz %q", text, startOf(r), r.ClarificationQuestion, r.TZ)
		}
	}
}
