package clockstate

import (
	"regexp"
	"strconv"
	"strings"
)

// Zone words of a whole-text expression (issue 32, item 3), read when no
// zone name, offset or place was found: an abbreviation used by one zone
// only ("10:00 CEST", "9am JST"), read with an assumption; "west coast"
// and "east coast", read from the user's own continent or asked; "my
// time" and "local time", the user's own zone (the anchor); "your time",
// asked (Kairos keeps no zone of its own).

// unambiguousAbbrevs are the abbreviations one zone's rules explain
// (several zones may share them, with one offset whenever they are in
// use): read as that zone, the assumption stated. EST, CST, PST, IST, BST,
// AST, GST and the US ones stay known-zone-or-ask (CLOCK.md §4.2).
var unambiguousAbbrevs = map[string]string{"JST": "Asia/Tokyo", "KST": "Asia/Seoul", "CET": "Europe/Berlin",
	"CEST": "Europe/Berlin", "EET": "Europe/Athens", "EEST": "Europe/Athens", "WET": "Europe/Lisbon", "WEST": "Europe/Lisbon",
	"HKT": "Asia/Hong_Kong", "SGT": "Asia/Singapore", "AEST": "Australia/Brisbane", "AEDT": "Australia/Sydney",
	"ACST": "Australia/Darwin", "ACDT": "Australia/Adelaide", "AWST": "Australia/Perth", "NZST": "Pacific/Auckland",
	"NZDT": "Pacific/Auckland", "MSK": "Europe/Moscow", "SAST": "Africa/Johannesburg", "WIB": "Asia/Jakarta",
	"NPT": "Asia/Kathmandu", "PHT": "Asia/Manila", "ICT": "Asia/Bangkok", "PKT": "Asia/Karachi", "HST": "Pacific/Honolulu",
	"AKST": "America/Anchorage", "AKDT": "America/Anchorage"}

var (
	reCoast    = regexp.MustCompile(`(?i)\b(west|east)(?:ern)?\s+coast(?:\s+time)?\b`)
	reMyTime   = regexp.MustCompile(`(?i)\b(?:my|our)\s+(?:local\s+)?time\b|\blocal\s+time\b`)
	reYourTime = regexp.MustCompile(`(?i)\byour\s+(?:local\s+)?time\b`)
)

// zoneWords reads the zone words after the other finders found nothing;
// hit and q are theirs (an abbreviation asked about, perhaps).
func (p *parser) zoneWords(hit tzHit, q string) (tzHit, bool, string) {
	if home, ok := unambiguousAbbrevs[hit.Abbrev]; ok && q != "" {
		hit.TZ = home
		p.words.assumptions = append(p.words.assumptions, "read "+strconv.Quote(hit.Abbrev)+" as "+home+" time")
		return hit, true, ""
	}
	if q != "" {
		return hit, false, q
	}
	if !mayHoldFold(p.text, "coast", "time") { // masking only blanks: what the text lacks, masked lacks
		return hit, false, ""
	}
	text := string(p.masked)
	if m := reCoast.FindStringSubmatchIndex(text); m != nil {
		return p.coast(m, text)
	}
	if m := reYourTime.FindStringIndex(text); m != nil {
		return tzHit{Start: m[0], End: m[1], Source: "words"}, false,
			"By " + strconv.Quote(text[m[0]:m[1]]) + " do you mean your own time zone? I keep no time zone of my own: please give a city or a zone such as Europe/Lisbon."
	}
	if m := reMyTime.FindStringIndex(text); m != nil && p.anchor != nil {
		p.use(m[0], m[1]) // the user's own zone: the anchor
		p.mask(m[0], m[1])
	}
	return hit, false, ""
}

// coast reads "west coast" or "east coast" from the continent of the
// user's zone (the anchor): the United States' or Australia's; asked
// otherwise.
func (p *parser) coast(m []int, text string) (tzHit, bool, string) {
	west := strings.EqualFold(text[m[2]:m[3]], "west")
	hit := tzHit{Start: m[0], End: m[1], Source: "words"}
	switch {
	case strings.HasPrefix(p.anchorName, "America/") || strings.HasPrefix(p.anchorName, "US/"):
		hit.TZ = map[bool]string{true: "America/Los_Angeles", false: "America/New_York"}[west]
	case strings.HasPrefix(p.anchorName, "Australia/"):
		hit.TZ = map[bool]string{true: "Australia/Perth", false: "Australia/Sydney"}[west]
	default:
		us, au := "America/New_York", "Australia/Sydney"
		if west {
			us, au = "America/Los_Angeles", "Australia/Perth"
		}
		return hit, false, "Which " + strings.ToLower(text[m[2]:m[3]]) + " coast do you mean: the United States' (" + us + ") or Australia's (" + au + ")?"
	}
	p.words.assumptions = append(p.words.assumptions, "read "+strconv.Quote(text[m[0]:m[1]])+" as "+hit.TZ+" time")
	return hit, true, ""
}
