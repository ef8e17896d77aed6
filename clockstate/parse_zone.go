package clockstate

import (
	"regexp"
	"strings"
	"time"

	"github.com/olebedev/when/rules"
)

// Zone pieces the general finder (findExplicitTZ) leaves to the parser:
// a bare offset right after a time ("7:45pm +09:30", "14:00 -0500") and
// "in <place>" after a time ("5pm in London", "noon in New York").

var (
	reOffsetAfterTime = regexp.MustCompile(`(?i)(?:\d{1,2}:\d{2}(?::\d{2})?|\d\s*[ap]\.?m\.?)\s*([+\-−]\d{2}:?\d{2})\b`)
	reInAfterTime     = regexp.MustCompile(`(?i)(?:\d|[ap]\.?m\.?|noon|midnight|midday)\s+in\s+`)
)

func findZoneAfterTime(text string) (tzHit, bool) {
	if m := reOffsetAfterTime.FindStringSubmatchIndex(text); m != nil {
		if mins, ok := parseOffsetLabel(strings.Replace(text[m[2]:m[3]], "−", "-", 1)); ok && mins >= -14*60 && mins <= 14*60 {
			return tzHit{TZ: FixedOffsetTZ(mins), Start: m[2], End: m[3], Source: "offset"}, true
		}
	}
	for _, m := range reInAfterTime.FindAllStringIndex(text, 4) {
		words := splitWords(text[m[1]:])
		if tz, n := placeAt(words, 0, false); n > 0 {
			return tzHit{TZ: tz, Start: m[1] - 3, End: m[1] + words[n-1].end, Source: "place"}, true
		}
	}
	return tzHit{}, false
}

// abbrevSeasonQuestion is §4.2 for a resolved abbreviation: the zone must
// use it at that date. "EST" in July for New York (on EDT) is asked about,
// never taken silently as local time.
func abbrevSeasonQuestion(hit tzHit, ref time.Time) string {
	if _, generic := genericAbbrev[hit.Abbrev]; generic {
		return ""
	}
	loc, err := LoadTZ(hit.TZ)
	if err != nil {
		return ""
	}
	name, _ := ref.In(loc).Zone()
	if name == hit.Abbrev {
		return ""
	}
	return "Do you mean " + hit.Abbrev + " literally, or local time in " + hit.TZ + " (" + name + " on that date)? " +
		hit.Abbrev + " is not in use there then; please give the city or a UTC offset."
}

// maskRepeats blanks further copies of the zone word a hit came from, so
// "14:00 UTC - 16:30 UTC" reads as one range in one zone.
func maskRepeats(masked []byte, hit tzHit) []byteSpan {
	if hit.End <= hit.Start || hit.End > len(masked) {
		return nil
	}
	// Byte-wise lower case: strings.ToLower may change the length (invalid
	// UTF-8 becomes U+FFFD), and the indexes must stay those of masked.
	word := asciiLower(string(masked[hit.Start:hit.End]))
	if strings.TrimSpace(word) == "" {
		return nil
	}
	var out []byteSpan
	lo := asciiLower(string(masked))
	for i := hit.End; i < len(lo); {
		j := strings.Index(lo[i:], word)
		if j < 0 {
			return out
		}
		for k := i + j; k < i+j+len(word); k++ {
			masked[k] = ' '
		}
		out = append(out, byteSpan{i + j, i + j + len(word)})
		i += j + len(word)
	}
	return out
}

// reLowerAbbrev is a lower-case zone abbreviation right after a time
// ("9am est", "16:00 cet").
var reLowerAbbrev = regexp.MustCompile(`(?:\d|[ap]\.?m\.?)\s*\b(est|edt|cst|cdt|mst|mdt|pst|pdt|akst|akdt|hst|cet|cest|eet|eest|bst|ist|jst|kst|aest|aedt|acst|acdt|awst|nzst|nzdt|sgt|hkt|et|ct|mt|pt)\b`)

// reRegionAfterTime is a US region word after a time ("noon eastern",
// "3pm central time"), read as ET, CT, MT, PT.
var reRegionAfterTime = regexp.MustCompile(`(?i)(?:\d|[ap]\.?m\.?|noon|midnight)\s*\b(eastern|central|mountain|pacific)((?:\s+(?:standard|daylight))?(?:\s+time)?)\b`)

// upperAbbrevAfterTime upper-cases such an abbreviation (same length, so
// the indexes hold) for the zone finder, which reads upper case only, and
// writes a region word as its abbreviation padded with spaces; regions
// are the spans of those region phrases.
func upperAbbrevAfterTime(s string) (out string, regions []byteSpan) {
	ms := reLowerAbbrev.FindAllStringSubmatchIndex(s, 4)
	rs := reRegionAfterTime.FindAllStringSubmatchIndex(s, 2)
	if ms == nil && rs == nil {
		return s, nil
	}
	b := []byte(s)
	for _, m := range ms {
		for i := m[2]; i < m[3]; i++ {
			if b[i] >= 'a' && b[i] <= 'z' {
				b[i] -= 'a' - 'A'
			}
		}
	}
	for _, m := range rs {
		if strings.HasPrefix(strings.ToLower(s[m[3]:]), " europe") {
			continue // "central european time" is CET, asked about as such
		}
		ab := strings.ToUpper(s[m[2]:m[2]+1]) + "T" // ET, CT, MT, PT
		switch tail := strings.ToLower(s[m[4]:m[5]]); {
		case strings.Contains(tail, "standard"):
			ab = ab[:1] + "ST" // EST: checked against the season like the abbreviation
		case strings.Contains(tail, "daylight"):
			ab = ab[:1] + "DT"
		}
		for i := m[2]; i < m[5]; i++ {
			b[i] = ' '
		}
		copy(b[m[2]:], ab)
		regions = append(regions, byteSpan{m[2], m[5]})
	}
	return string(b), regions
}

// fullSpan is the whole phrase a rule matched, boundary characters
// trimmed: for span rules the match itself, for olebedev/when's rules
// (whose Left/Right cover only the captures) the regexp's whole match.
func fullSpan(r rules.Rule, text string, off int, m *rules.Match) (int, int) {
	f, ok := r.(*rules.F)
	if !ok {
		return m.Left, m.Right
	}
	ix := f.RegExp.FindStringIndex(text[off:])
	if ix == nil {
		return m.Left, m.Right
	}
	a, b := ix[0]+off, ix[1]+off
	for a < b && !isRunByte(text[a]) {
		a++
	}
	for b > a && !isRunByte(text[b-1]) {
		b--
	}
	return min(a, m.Left), max(b, m.Right)
}

// asciiLower lower-cases ASCII letters only, keeping every byte's index.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
