package research

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The facts a claim states that a quote must hold: numbers (and the
// numbers of dates and times), month names read as their numbers, number
// words, and web addresses.

var (
	thousandsRe = regexp.MustCompile(`\b\d{1,3}(?:,\d{3})+\b`)
	decimalRe   = regexp.MustCompile(`\d+\.\d+`)
	digitsRe    = regexp.MustCompile(`\d+`)
	wordRe      = regexp.MustCompile(`[\p{L}\p{M}]+(?:['’][\p{L}]+)?`)
	addressRe   = regexp.MustCompile(`(?i)\b(?:https?://)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?:/[^\s)"'<>]*)?`)
)

var monthNumbers = map[string]string{
	"january": "1", "february": "2", "march": "3", "april": "4", "may": "5", "june": "6", "july": "7",
	"august": "8", "september": "9", "october": "10", "november": "11", "december": "12",
	"jan": "1", "feb": "2", "mar": "3", "apr": "4", "jun": "6", "jul": "7", "aug": "8", "sep": "9",
	"sept": "9", "oct": "10", "nov": "11", "dec": "12",
}

var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
	"fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
	"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
	"hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000",
}

// facts returns the facts of s: every number as its canonical digits
// ("1,200" and "1200" are "1200", "03" is "3", "27.30" is "27.3"), each
// digit group of a date or time ("2026-12-03" is 2026, 12 and 3),
// month names and number words as digits, and web addresses (lower-case,
// without scheme or trailing dot).
func facts(s string) map[string]bool {
	out := map[string]bool{}
	for _, a := range addressRe.FindAllString(s, -1) {
		out[canonAddress(a)] = true
	}
	s = thousandsRe.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, ",", "") })
	for _, d := range decimalRe.FindAllString(s, -1) {
		out[canonNumber(d)] = true
	}
	s = decimalRe.ReplaceAllString(s, " ")
	for _, d := range digitsRe.FindAllString(s, -1) {
		out[canonNumber(d)] = true
	}
	for _, w := range wordRe.FindAllString(s, -1) {
		lw := strings.ToLower(w)
		// "may", "mar" and the other short forms are months only when
		// capitalized.
		if n, ok := monthNumbers[lw]; ok && (len(lw) > 3 && lw != "may" || unicode.IsUpper([]rune(w)[0])) {
			out[n] = true
		}
		if n, ok := numberWords[lw]; ok {
			out[n] = true
		}
	}
	return out
}

func canonNumber(d string) string {
	if strings.Contains(d, ".") {
		if f, err := strconv.ParseFloat(d, 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	t := strings.TrimLeft(d, "0")
	if t == "" {
		return "0"
	}
	return t
}

func canonAddress(a string) string {
	a = strings.ToLower(strings.TrimRight(a, ".,;:!?"))
	a = strings.TrimPrefix(strings.TrimPrefix(a, "https://"), "http://")
	return strings.TrimPrefix(strings.TrimSuffix(a, "/"), "www.")
}

// missingFacts lists the facts of claim that quote does not hold.
func missingFacts(claim, quote string) []string {
	have := facts(quote)
	var miss []string
	for f := range facts(claim) {
		if !have[f] && !addressCovered(f, have) {
			miss = append(miss, f)
		}
	}
	return miss
}

// addressCovered: a host named in a claim is held by a quote that names
// a page on it.
func addressCovered(f string, have map[string]bool) bool {
	if !strings.ContainsFunc(f, unicode.IsLetter) {
		return false
	}
	for h := range have {
		if strings.HasPrefix(h, f+"/") {
			return true
		}
	}
	return false
}
