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
	if m := offsetAfterTime(text); m != nil {
		if mins, ok := parseOffsetLabel(strings.Replace(text[m[2]:m[3]], "−", "-", 1)); ok && mins >= -14*60 && mins <= 14*60 {
			return tzHit{TZ: FixedOffsetTZ(mins), Start: m[2], End: m[3], Source: "offset"}, true
		}
	}
	if !hasSpacedIn(text) {
		return tzHit{}, false
	}
	for _, m := range reInAfterTime.FindAllStringIndex(text, 4) {
		words := splitWords(text[m[1]:])
		if tz, n := placeAt(words, 0, false); n > 0 {
			return tzHit{TZ: tz, Start: m[1] - 3, End: m[1] + words[n-1].end, Source: "place"}, true
		}
	}
	return tzHit{}, false
}

// offsetAfterTime is reOffsetAfterTime's match, run only when the text
// holds a sign.
func offsetAfterTime(text string) []int {
	if !strings.ContainsAny(text, "+-−") {
		return nil
	}
	return reOffsetAfterTime.FindStringSubmatchIndex(text)
}

// hasSpacedIn says whether text holds "in" (any case) between white
// space, as every match of reInAfterTime does.
func hasSpacedIn(text string) bool {
	for i := 1; i+2 < len(text); i++ {
		if isSpace(text[i-1]) && text[i]|0x20 == 'i' && text[i+1]|0x20 == 'n' && isSpace(text[i+2]) {
			return true
		}
	}
	return false
}

// isSpace is a byte \s reads: space, tab, newline, form feed, return.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
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
var reLowerAbbrev = regexp.MustCompile(`(?:\d|[ap]\.?m\.?)\s*\b(` + strings.Join(strings.Fields(abbrevWordsAfterTime), "|") + `)\b`)

// abbrevWordsAfterTime are the words of reLowerAbbrev: the lower-case
// abbreviations and the bare US ones.
const abbrevWordsAfterTime = lowerAbbrevWords + " et ct mt pt"

// hasLowerAbbrev says whether a word of s (a run of ASCII letters,
// digits and "_") is one reLowerAbbrev reads, as its \b on both sides
// make every match.
func hasLowerAbbrev(s string) bool {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j > i && lowerAbbrevsAfterTime[s[i:j]] {
			return true
		}
		i = j + 1
	}
	return false
}

var lowerAbbrevsAfterTime = setOf(abbrevWordsAfterTime)

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// reRegionAfterTime is a US region word after a time ("noon eastern",
// "3pm central time"), read as ET, CT, MT, PT.
var reRegionAfterTime = regexp.MustCompile(`(?i)(?:\d|[ap]\.?m\.?|noon|midnight)\s*\b(eastern|central|mountain|pacific)((?:\s+(?:standard|daylight))?(?:\s+time)?)\b`)

// upperAbbrevAfterTime upper-cases such an abbreviation (same length, so
// the indexes hold) for the zone finder, which reads upper case only, and
// writes a region word as its abbreviation padded with spaces; regions
// are the spans of those region phrases.
func upperAbbrevAfterTime(s string) (out string, regions []byteSpan) {
	var ms, rs [][]int
	if hasLowerAbbrev(s) {
		ms = reLowerAbbrev.FindAllStringSubmatchIndex(s, 4)
	}
	if mayHoldFold(s, "eastern", "central", "mountain", "pacific") {
		rs = reRegionAfterTime.FindAllStringSubmatchIndex(s, 2)
	}
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

// findRule runs a rule on text[off:]; the match's indexes are text's.
// For olebedev/when's rules (whose Left/Right cover only the captures) it
// also returns the regexp's whole match, from the same run, for fullSpan.
func findRule(r rules.Rule, text string, off int) (*rules.Match, []int) {
	var f *rules.F
	switch x := r.(type) {
	case *rules.F:
		f = x
	case lazyRule:
		f = x.get()
	}
	if f == nil {
		m := r.Find(text[off:])
		if m != nil {
			m.Left += off
			m.Right += off
		}
		return m, nil
	}
	// What rules.F.Find does, keeping the whole match it drops.
	ix := f.RegExp.FindStringSubmatchIndex(text[off:])
	if len(ix) <= 2 {
		return nil, nil
	}
	m := &rules.Match{Applier: f.Applier, Left: -1, Captures: make([]string, 0, (len(ix)-2)/2)}
	for i := 2; i < len(ix); i += 2 {
		if ix[i] < 0 || ix[i+1] < 0 {
			m.Captures = append(m.Captures, "")
			continue
		}
		if m.Left == -1 {
			m.Left = ix[i]
		}
		m.Captures = append(m.Captures, text[off+ix[i]:off+ix[i+1]])
		m.Right = ix[i+1]
	}
	m.Text = text[off+m.Left : off+m.Right]
	m.Left += off
	m.Right += off
	return m, []int{ix[0] + off, ix[1] + off}
}

// fullSpan is the whole phrase a rule matched, boundary characters
// trimmed: for span rules the match itself, for olebedev/when's rules
// the regexp's whole match (findRule).
func fullSpan(whole []int, text string, m *rules.Match) (int, int) {
	if whole == nil {
		return m.Left, m.Right
	}
	a, b := whole[0], whole[1]
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
