package research

import "regexp"

// What the external model of tier 4 never sees: the operator's secrets
// (every encoding the log redactor knows), e-mail addresses, phone
// numbers, long digit runs (card, account and identity numbers), IP
// addresses and the query part of URLs. The user's memories are never
// sent at all.
var personal = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?i)[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}`), "[email]"},
	{regexp.MustCompile(`(https?://[^\s?#"']+)\?[^\s#"']*`), "$1"},
	{regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`), "[address]"},
	{regexp.MustCompile(`\+?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,5}`), "[number]"},
}

// longDigits finds runs of 7 or more digits in the matches above.
var longDigits = regexp.MustCompile(`\d`)

// redact removes secrets and personal details from text bound for the
// external model. Years, times and short numbers stay.
func (r *run) redact(s string) string {
	s = r.e.scrub.Scrub(s)
	for _, p := range personal[:3] {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return personal[3].re.ReplaceAllStringFunc(s, func(m string) string {
		if len(longDigits.FindAllString(m, -1)) >= 7 {
			return "[number]"
		}
		return m
	})
}
