package clockstate

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// tzHit is a timezone stated in a text.
type tzHit struct {
	TZ         string
	Start, End int    // byte span of the phrase in the text
	Source     string // iana, offset, utc, place, abbreviation
	Abbrev     string // the abbreviation it came from, if any
}

var (
	reIANA       = regexp.MustCompile(`\b(?:Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)/[A-Za-z_\-]+(?:/[A-Za-z_\-]+)?(?:[+\-]\d{1,2})?`)
	reUTCOffset  = regexp.MustCompile(`(?i)\b(?:UTC|GMT)\s*([+\-−])\s*(\d{1,2})(?::?(\d{2}))?\b`)
	reUTC        = regexp.MustCompile(`(?i)\b(?:UTC|GMT|Zulu)\b`)
	reTimeWord   = regexp.MustCompile(`(?i)\b(?:time\s*zone|time|tz|clock)\b`)
	reAbbrev     = regexp.MustCompile(`\b(?:AKST|AKDT|ACST|ACDT|AEST|AEDT|AWST|NZST|NZDT|CEST|EEST|WEST|SAST|EST|EDT|CST|CDT|MST|MDT|PST|PDT|HST|IST|BST|CET|EET|WET|JST|KST|HKT|SGT|MSK|WIB|NPT|AST|ADT|NST|NDT|PHT|ICT|PKT|GST|ET|CT|MT|PT)\b`)
	reTimeBefore = regexp.MustCompile(`(?i)(?:\d|[ap]\.?m\.?|noon|midnight)\s*$`)
)

// abbreviationCandidates suggests zones in the clarification question for
// an abbreviation; it is never used to map one silently (§4.2).
var abbreviationCandidates = map[string][]string{
	"EST": {"America/New_York"}, "EDT": {"America/New_York"}, "ET": {"America/New_York"},
	"CST": {"America/Chicago", "Asia/Shanghai", "America/Havana"}, "CDT": {"America/Chicago"}, "CT": {"America/Chicago"},
	"MST": {"America/Denver", "America/Phoenix"}, "MDT": {"America/Denver"}, "MT": {"America/Denver"},
	"PST": {"America/Los_Angeles", "Asia/Manila"}, "PDT": {"America/Los_Angeles"}, "PT": {"America/Los_Angeles"},
	"AKST": {"America/Anchorage"}, "AKDT": {"America/Anchorage"}, "HST": {"Pacific/Honolulu"},
	"IST": {"Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"}, "BST": {"Europe/London", "Asia/Dhaka"},
	"CET": {"Europe/Berlin", "Europe/Paris"}, "CEST": {"Europe/Berlin", "Europe/Paris"},
	"EET": {"Europe/Athens", "Europe/Helsinki"}, "EEST": {"Europe/Athens", "Europe/Helsinki"},
	"WET": {"Europe/Lisbon"}, "WEST": {"Europe/Lisbon"}, "JST": {"Asia/Tokyo"}, "KST": {"Asia/Seoul"},
	"HKT": {"Asia/Hong_Kong"}, "SGT": {"Asia/Singapore"}, "AEST": {"Australia/Sydney", "Australia/Brisbane"},
	"AEDT": {"Australia/Sydney"}, "ACST": {"Australia/Adelaide", "Australia/Darwin"}, "ACDT": {"Australia/Adelaide"},
	"AWST": {"Australia/Perth"}, "NZST": {"Pacific/Auckland"}, "NZDT": {"Pacific/Auckland"}, "MSK": {"Europe/Moscow"},
	"SAST": {"Africa/Johannesburg"}, "WIB": {"Asia/Jakarta"}, "NPT": {"Asia/Kathmandu"}, "AST": {"America/Halifax", "Asia/Riyadh"},
	"ADT": {"America/Halifax"}, "NST": {"America/St_Johns"}, "NDT": {"America/St_Johns"}, "PHT": {"Asia/Manila"},
	"ICT": {"Asia/Bangkok"}, "PKT": {"Asia/Karachi"}, "GST": {"Asia/Dubai", "Atlantic/South_Georgia"},
}

// genericAbbrev maps the US "ET/CT/MT/PT" forms to the names a zone uses.
var genericAbbrev = map[string][2]string{"ET": {"EST", "EDT"}, "CT": {"CST", "CDT"}, "MT": {"MST", "MDT"}, "PT": {"PST", "PDT"}}

// zoneAbbrevs lists the abbreviations a zone uses in ref's year.
func zoneAbbrevs(tz string, ref time.Time) []string {
	loc, err := LoadTZ(tz)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range []time.Month{time.January, time.April, time.July, time.October} {
		name, _ := time.Date(ref.Year(), m, 15, 12, 0, 0, 0, time.UTC).In(loc).Zone()
		out = append(out, name)
	}
	return out
}

// resolveAbbrev resolves an abbreviation from the zones known for the
// user (§4.2: "resolve via known user context or ask").
func resolveAbbrev(abbr string, known []string, ref time.Time) (string, bool) {
	want := []string{abbr}
	if g, ok := genericAbbrev[abbr]; ok {
		want = g[:]
	}
	for _, tz := range known {
		if tz == "" {
			continue
		}
		for _, name := range zoneAbbrevs(tz, ref) {
			for _, w := range want {
				if name == w {
					return tz, true
				}
			}
		}
	}
	return "", false
}

// abbrevQuestion asks which zone an abbreviation means.
func abbrevQuestion(abbr string) string {
	c := abbreviationCandidates[abbr]
	if len(c) == 0 {
		return "Which timezone do you mean by " + strconv.Quote(abbr) + "? Please give a city or an IANA name such as Europe/Berlin."
	}
	return "Which timezone do you mean by " + strconv.Quote(abbr) + " (for example " + strings.Join(c, " or ") +
		")? Please give a city or an IANA name."
}

// findExplicitTZ finds a timezone stated in text (§4.2 step 1): an IANA
// name, a UTC offset, "UTC", "<place> time" / "time in <place>", or an
// abbreviation resolved from the known zones. An abbreviation that the
// known zones do not explain yields a clarification question instead.
func findExplicitTZ(text string, known []string, ref time.Time) (hit tzHit, found bool, question string) {
	// Each regexp runs only when the text holds what it needs (a name
	// "/", an abbreviation two capitals): most texts hold none of it.
	if strings.IndexByte(text, '/') >= 0 {
		if loc := reIANA.FindStringIndex(text); loc != nil {
			name := text[loc[0]:loc[1]]
			if ValidTZ(name) {
				return tzHit{TZ: normalizeUTC(name), Start: loc[0], End: loc[1], Source: "iana"}, true, ""
			}
		}
	}
	utc := mayHoldFold(text, "utc", "gmt", "zulu")
	if utc {
		if h, ok := findUTCOffset(text); ok {
			return h, true, ""
		}
	}
	if h, ok := findPlaceTime(text); ok {
		return h, true, ""
	}
	if utc {
		if loc := reUTC.FindStringIndex(text); loc != nil {
			return tzHit{TZ: "UTC", Start: loc[0], End: loc[1], Source: "utc"}, true, ""
		}
	}
	if !hasCapitalPair(text) {
		return tzHit{}, false, ""
	}
	for _, loc := range reAbbrev.FindAllStringIndex(text, -1) {
		abbr := text[loc[0]:loc[1]]
		if len(abbr) == 2 && !reTimeBefore.MatchString(text[:loc[0]]) {
			continue // ET, CT, PT, MT only right after a time ("9am PT")
		}
		if tz, ok := resolveAbbrev(abbr, known, ref); ok {
			return tzHit{TZ: tz, Start: loc[0], End: loc[1], Source: "abbreviation", Abbrev: abbr}, true, ""
		}
		return tzHit{Start: loc[0], End: loc[1], Source: "abbreviation", Abbrev: abbr}, false, abbrevQuestion(abbr)
	}
	return tzHit{}, false, ""
}

// findUTCOffset finds "UTC+9", "GMT-05:30".
func findUTCOffset(text string) (tzHit, bool) {
	m := reUTCOffset.FindStringSubmatchIndex(text)
	if m == nil {
		return tzHit{}, false
	}
	h, _ := strconv.Atoi(text[m[4]:m[5]])
	mins := 0
	if m[6] >= 0 {
		mins, _ = strconv.Atoi(text[m[6]:m[7]])
	}
	total := h*60 + mins
	if text[m[2]:m[3]] != "+" {
		total = -total
	}
	if h <= 14 && mins < 60 {
		return tzHit{TZ: FixedOffsetTZ(total), Start: m[0], End: m[1], Source: "offset"}, true
	}
	return tzHit{}, false
}

// word is a token of a text with its byte span.
type word struct {
	text       string // trimmed of surrounding punctuation
	start, end int
}

func splitWords(text string) []word {
	var out []word
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		tok := strings.TrimFunc(text[i:j], func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if tok != "" {
			s := i + strings.Index(text[i:j], tok)
			out = append(out, word{text: tok, start: s, end: s + len(tok)})
		}
		i = j
	}
	return out
}

// placeAt tries the longest place name starting at words[i]; titled
// requires each significant word to start with an upper-case letter.
func placeAt(words []word, i int, titled bool) (tz string, n int) {
	if titled && !isTitled(words[i].text, false) || !placeFirstWord(words[i].text) {
		return "", 0
	}
	for n = maxPlaceWords; n >= 1; n-- {
		if i+n > len(words) {
			continue
		}
		parts := make([]string, n)
		ok := true
		for k := 0; k < n; k++ {
			w := words[i+k].text
			if titled && !isTitled(w, k > 0) {
				ok = false
				break
			}
			parts[k] = w
		}
		if !ok {
			continue
		}
		lookup := lookupZonePlace
		if titled {
			lookup = lookupPlace // a mentioned place: the alias table's unambiguous names only
		}
		if tz, found := lookup(strings.Join(parts, " ")); found {
			return tz, n
		}
	}
	return "", 0
}

// placeFirst are the first words of the place names (alias table and
// zone database), lower case without dots: a word that starts none is no
// place, and placeAt looks no further.
var placeFirst = func() map[string]bool {
	m := map[string]bool{}
	for _, places := range []map[string]string{placeIndex, zoneCities} {
		for k := range places {
			m[strings.Fields(k)[0]] = true
		}
	}
	return m
}()

// placeFirstWord says whether w (any case, dots ignored) starts a place
// name, without allocating for a short word.
func placeFirstWord(w string) bool {
	var buf [32]byte
	n := 0
	for i := 0; i < len(w) && w[i] != '-'; i++ { // "Port-au-Prince": its first word
		c := w[i]
		switch {
		case c == '.':
			continue
		case n == len(buf), c >= utf8.RuneSelf:
			first, _, _ := strings.Cut(w, "-")
			return placeFirst[strings.ReplaceAll(strings.ToLower(first), ".", "")]
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return placeFirst[string(buf[:n])]
}

func isTitled(w string, inner bool) bool {
	if inner {
		switch w {
		case "de", "la", "es", "of", "do", "da":
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// findPlaceTime finds "<place> time", "<place> timezone" and "time in
// <place>" (any case): an explicit zone by place.
func findPlaceTime(text string) (tzHit, bool) {
	if !mayHoldFold(text, "time", "tz", "clock") || !reTimeWord.MatchString(text) {
		return tzHit{}, false
	}
	words := splitWords(text)
	for i, w := range words {
		lw := strings.ToLower(w.text)
		if lw != "time" && lw != "timezone" && lw != "tz" && lw != "zone" && lw != "clock" {
			continue
		}
		// "<place> time": the place ends right before this word.
		end := i
		if lw == "zone" && i > 0 && strings.EqualFold(words[i-1].text, "time") {
			end = i - 1
		}
		for n := maxPlaceWords; n >= 1; n-- {
			if end-n < 0 {
				continue
			}
			if tz, k := placeAt(words[end-n:end], 0, false); k == n {
				return tzHit{TZ: tz, Start: words[end-n].start, End: words[i].end, Source: "place"}, true
			}
		}
		// "time in <place>".
		if i+2 < len(words) && strings.EqualFold(words[i+1].text, "in") {
			if tz, k := placeAt(words, i+2, false); k > 0 {
				return tzHit{TZ: tz, Start: w.start, End: words[i+1+k].end, Source: "place"}, true
			}
		}
	}
	return tzHit{}, false
}

// findMentionedPlace implements §4.2 step 4: the zone of the place names
// mentioned in text (capitalised, as names are written), when they all
// agree on one zone; ambiguous mentions give nothing.
func findMentionedPlace(text string) (string, bool) {
	words := splitWords(text)
	found := ""
	for i := 0; i < len(words); i++ {
		tz, n := placeAt(words, i, true)
		if n == 0 {
			continue
		}
		if found != "" && found != tz {
			return "", false
		}
		found = tz
		i += n - 1
	}
	return found, found != ""
}

// knownZones de-duplicates the zones known from context, in order.
func knownZones(zs ...string) []string {
	var out []string
	for _, z := range zs {
		if z == "" {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == z
		}
		if !dup {
			out = append(out, z)
		}
	}
	return out
}

// sortedZones returns the keys of a set in order.
func sortedZones(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mayHoldFold says whether text may hold one of words (lower-case ASCII)
// in any case, as a (?i) regexp reads it: a case-insensitive search, and
// yes for any text with a non-ASCII byte (ſ and the Kelvin sign fold onto
// s and k). It lets a regexp be skipped where it cannot match.
func mayHoldFold(text string, words ...string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			return true
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		for _, w := range words {
			if c == w[0] && len(text)-i >= len(w) && hasFoldAt(text, i, w) {
				return true
			}
		}
	}
	return false
}

func hasFoldAt(text string, i int, w string) bool {
	for k := 1; k < len(w); k++ {
		c := text[i+k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[k] {
			return false
		}
	}
	return true
}

// hasCapitalPair says whether text holds two ASCII capitals in a row, as
// every abbreviation reAbbrev reads does.
func hasCapitalPair(text string) bool {
	for i := 1; i < len(text); i++ {
		if text[i] >= 'A' && text[i] <= 'Z' && text[i-1] >= 'A' && text[i-1] <= 'Z' {
			return true
		}
	}
	return false
}
