package clockstate

import (
	"strings"
	"testing"
	"unicode"
)

// hintedRef is the gate as it was written before the hint table: one
// substring search per hint per rule. The table must agree with it.
func hintedRef(hint []string, lo string, hasDigit bool) bool {
	if len(hint) == 0 {
		return true
	}
	ok := false
	for _, h := range hint {
		if h == "&" {
			if !ok {
				return false
			}
			ok = false
			continue
		}
		if ok {
			continue
		}
		switch {
		case h == "#":
			ok = hasDigit
		case h[0] == '#':
			ok = hasDigit && digitThenRef(lo, h[1:])
		default:
			ok = strings.Contains(lo, h)
		}
	}
	return ok
}

func digitThenRef(s, suffix string) bool {
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], suffix)
		if j < 0 {
			return false
		}
		if k := i + j; k > 0 && s[k-1] >= '0' && s[k-1] <= '9' {
			return true
		}
		i += j + 1
	}
	return false
}

// hintTexts are the corpus phrases and, for every fourth, variants that
// move the hints around (case, padding, digits glued to words, a pasted
// dash).
func hintTexts(tb testing.TB) []string {
	var out []string
	for i, c := range loadCorpus(tb) {
		t := c.text
		out = append(out, t)
		if i%4 == 0 {
			out = append(out, strings.ToUpper(t), "x"+t+"x", strings.ReplaceAll(t, " ", ""), strings.ReplaceAll(t, " ", "\t"),
				strings.ReplaceAll(t, "-", "–"), "ſ "+t)
		}
	}
	return out
}

func checkGate(t *testing.T, text string) {
	lo := hintText(text)
	for _, hasDigit := range []bool{false, true} {
		b := hints.scan(lo, hasDigit)
		for i, r := range allRules {
			if got, want := hints.gate(i, &b, true), hintedRef(r.hint, lo, hasDigit); got != want {
				t.Fatalf("%q digit=%v rule %d: table gate %v, hints say %v", text, hasDigit, r.id, got, want)
			}
		}
	}
}

// checkNeeds: a rule whose regexp matches the text passes its needs.
func checkNeeds(t *testing.T, text string) {
	lo := hintText(text)
	b := hints.scan(lo, strings.ContainsAny(text, "0123456789"))
	if strings.Contains(lo, "ſ") {
		return // needs are not applied
	}
	for i, r := range allRules {
		if len(hints.needs[i]) == 0 || allOf(hints.needs[i], &b) || !allOf(hints.gates[i], &b) {
			continue // needs met, or the hints keep the rule out anyway: needs skip nothing there
		}
		if m := r.r.Find(text); m != nil {
			t.Fatalf("%q: rule %d matches %q but its needs say it cannot", text, r.id, m.Text)
		}
	}
}

// The hint table is the gate the hints describe, for every corpus phrase.
func TestHintTable_AgreesWithHints(t *testing.T) {
	for _, text := range hintTexts(t) {
		checkGate(t, text)
	}
}

// A rule's needs never skip a text its regexp matches.
func TestHintTable_NeedsNeverSkipAMatch(t *testing.T) {
	for _, text := range hintTexts(t) {
		checkNeeds(t, text)
	}
}

func FuzzHintTable(f *testing.F) {
	for i, c := range loadCorpus(f) {
		if i%5 == 0 {
			f.Add(c.text)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkGate(t, text)
		checkNeeds(t, text)
	})
}

// Needs are lower-case words matched on strings.ToLower of the text; that
// is sound because the only runes (?i) folds onto ASCII letters are ſ
// (not lower-cased to s: needs are then off) and the Kelvin sign (lower-
// cased to k).
func TestHintTable_FoldsOntoASCII(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < 0x80 && unicode.IsLetter(f) {
				switch {
				case r == 'ſ':
				case strings.ToLower(string(r)) == string(unicode.ToLower(f)):
				default:
					t.Errorf("%U folds onto %q and lower-cases to %q", r, f, strings.ToLower(string(r)))
				}
			}
		}
	}
}
