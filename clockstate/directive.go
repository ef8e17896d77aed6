package clockstate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// Directive kinds (§6.2 A, §5.2).
const (
	DirNone    = ""
	DirClockIt = "clock_it" // clock it: …, clock: …, "… clock it"
	DirKind    = "kind"     // clock: kind project
	DirTZ      = "tz"       // clock: tz Asia/Tokyo
	DirMode    = "mode"     // clock: mode light
	DirDone    = "done"     // clock: done [label]
	DirCancel  = "cancel"   // clock: cancel [label]
)

// Directive is a plain-text clock directive found in a message.
type Directive struct {
	Kind string
	// Arg is the action text (clock it), the kind, zone or mode, or the
	// label filter of done/cancel. It may be empty.
	Arg string
	// Appended is true for "… clock it" at the end of a message.
	Appended bool
	// Group is true for "clock it for the group: …" (CLOCK.md §7.3): the
	// action belongs to the group thread, not to the one who said it.
	Group bool
}

var (
	reDirClockIt  = regexp.MustCompile(`(?is)^\s*clock\s+it\b[\s:\-–—]*(.*)$`)
	reDirGroup    = regexp.MustCompile(`(?is)^for\s+(?:the\s+(?:whole\s+)?(?:group|team|chat)|everyone|all\s+of\s+us|us\s+all)\b[\s:\-–—]*(.*)$`)
	reDirColon    = regexp.MustCompile(`(?is)^\s*clock\s*:\s*(.*)$`)
	reDirAppended = regexp.MustCompile(`(?is)^(.*?\S)[\s,;:.!\-–—(]*\bclock\s+it[\s.!)]*$`)
	reDirKind     = regexp.MustCompile(`(?is)^kind\b\s*:?\s*(\S*)\s*$`)
	reDirTZ       = regexp.MustCompile(`(?is)^(?:tz|timezone|time\s*zone)\b\s*:?\s*(\S*)\s*$`)
	reDirMode     = regexp.MustCompile(`(?is)^mode\b\s*:?\s*(\S*)\s*$`)
	reDirDone     = regexp.MustCompile(`(?is)^(done|finished|cancel|canceled|cancelled)\b[\s:\-–—]*(.*)$`)
)

// maxDirectiveText bounds the text a directive may carry.
const maxDirectiveText = 1024

// ParseDirective finds a clock directive: "clock it: …" or "clock: …" at
// the start of the message, "clock it" at its end, and the setting forms
// "clock: kind <kind>", "clock: tz <IANA>", "clock: mode <mode>",
// "clock: done [label]", "clock: cancel [label]". Case does not matter.
func ParseDirective(text string) Directive {
	if len(text) > maxDirectiveText {
		text = text[:maxDirectiveText]
	}
	if m := reDirClockIt.FindStringSubmatch(text); m != nil {
		if g := reDirGroup.FindStringSubmatch(m[1]); g != nil {
			return Directive{Kind: DirClockIt, Arg: cleanArg(g[1]), Group: true}
		}
		return Directive{Kind: DirClockIt, Arg: cleanArg(m[1])}
	}
	if m := reDirColon.FindStringSubmatch(text); m != nil {
		arg := strings.TrimSpace(m[1])
		if k := reDirKind.FindStringSubmatch(arg); k != nil {
			return Directive{Kind: DirKind, Arg: strings.ToLower(k[1])}
		}
		if k := reDirTZ.FindStringSubmatch(arg); k != nil {
			return Directive{Kind: DirTZ, Arg: k[1]}
		}
		if k := reDirMode.FindStringSubmatch(arg); k != nil {
			return Directive{Kind: DirMode, Arg: strings.ToLower(k[1])}
		}
		if k := reDirDone.FindStringSubmatch(arg); k != nil {
			kind := DirDone
			if strings.HasPrefix(strings.ToLower(k[1]), "cancel") {
				kind = DirCancel
			}
			return Directive{Kind: kind, Arg: cleanArg(k[2])}
		}
		return Directive{Kind: DirClockIt, Arg: cleanArg(arg)}
	}
	if m := reDirAppended.FindStringSubmatch(text); m != nil {
		return Directive{Kind: DirClockIt, Arg: cleanArg(m[1]), Appended: true}
	}
	return Directive{}
}

func cleanArg(s string) string {
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}

// acknowledgements are replies that carry nothing (§10.3: "ok", "got it").
var acknowledgements = map[string]bool{
	"ok": true, "okay": true, "k": true, "kk": true, "okie": true, "okey": true, "got it": true, "gotcha": true,
	"thanks": true, "thank you": true, "thx": true, "ty": true, "tnx": true, "cheers": true, "sure": true,
	"noted": true, "cool": true, "great": true, "nice": true, "alright": true, "all right": true, "np": true,
	"no problem": true, "you're welcome": true, "youre welcome": true, "welcome": true, "sounds good": true,
	"will do": true, "understood": true, "roger": true, "roger that": true, "yep": true, "yup": true,
	"fine": true, "perfect": true, "ack": true, "i see": true, "right": true, "mhm": true,
	"lol": true, "haha": true, "no worries": true, "anytime": true, "my pleasure": true, "glad to help": true,
	"glad i could help": true, "happy to help": true, "you are welcome": true, "ok thanks": true,
}

// IsAcknowledgement reports whether text is a pure acknowledgement ("ok",
// "got it", "thanks!", "👍"), which is not a substantive message (§10.3).
func IsAcknowledgement(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" {
		return true
	}
	if utf8.RuneCountInString(t) > 40 {
		return false
	}
	// Emoji and punctuation only.
	letters := false
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters = true
			break
		}
	}
	if !letters {
		return true
	}
	t = strings.ToLower(strings.ReplaceAll(t, "’", "'"))
	parts := strings.FieldsFunc(t, func(r rune) bool {
		return r == ',' || r == '.' || r == '!' || r == ';' || r == '\n' || unicode.IsSymbol(r) || r == '-' || r == '—' || r == ':' || r == '(' || r == ')'
	})
	n := 0
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		if p == "" {
			continue
		}
		n++
		if !acknowledgements[p] && !acknowledgements[strings.TrimSuffix(p, " so much")] && !acknowledgements[strings.TrimSuffix(p, " a lot")] {
			return false
		}
	}
	return n > 0
}

// Detected is a temporal action found in a message (§6.2 B, §6.5).
type Detected struct {
	Label    string // normalized, short
	Activity string // calibration key, "" when unknown
	Status   string // planned or in_progress
}

type actTemplate struct {
	re         *regexp.Regexp
	key        string
	typical    int
	maxMinutes int
}

// activityTemplates give default durations per activity (§6.3 "from
// templates"); per-user calibration overrides them.
var activityTemplates = []actTemplate{
	{regexp.MustCompile(`\bnap\b`), "sleep:nap", 30, 120},
	{regexp.MustCompile(`\b(?:sleep|bed|sack|hay)\b`), "sleep", 480, 720},
	{regexp.MustCompile(`\b(?:brb|be right back)\b`), "brb", 5, 20},
	{regexp.MustCompile(`\b(?:gym|work ?out|lift|lifting|exercise|crossfit)\b`), "exercise:gym", 120, 180},
	{regexp.MustCompile(`\b(?:run|jog|jogging|running)\b`), "exercise:run", 45, 120},
	{regexp.MustCompile(`\b(?:walk|walking|hike|hiking)\b`), "exercise:walk", 45, 180},
	{regexp.MustCompile(`\b(?:swim|swimming|pool)\b`), "exercise:swim", 60, 120},
	{regexp.MustCompile(`\byoga\b`), "exercise:yoga", 60, 120},
	{regexp.MustCompile(`\bdinner\b`), "meal:dinner", 75, 180},
	{regexp.MustCompile(`\blunch\b`), "meal:lunch", 45, 120},
	{regexp.MustCompile(`\bbreakfast\b`), "meal:breakfast", 30, 60},
	{regexp.MustCompile(`\b(?:cook|cooking)\b`), "cooking", 45, 120},
	{regexp.MustCompile(`\b(?:eat|food|meal|snack)\b`), "meal", 30, 90},
	{regexp.MustCompile(`\bshower\b`), "shower", 15, 45},
	{regexp.MustCompile(`\b(?:store|shop|shops|shopping|supermarket|grocery|groceries|market|mall)\b`), "errand:shopping", 60, 150},
	{regexp.MustCompile(`\b(?:doctor|dentist|hospital|pharmacy|vet|appointment|barber|hairdresser)\b`), "appointment", 90, 240},
	{regexp.MustCompile(`\b(?:meeting|standup|stand-up|interview)\b`), "meeting", 60, 120},
	{regexp.MustCompile(`\b(?:call|phone)\b`), "call", 30, 90},
	{regexp.MustCompile(`\b(?:class|school|university|lecture)\b`), "class", 90, 180},
	{regexp.MustCompile(`\b(?:movie|movies|cinema|film)\b`), "movie", 130, 200},
	{regexp.MustCompile(`\b(?:airport|flight|fly)\b`), "travel:flight", 240, 720},
	{regexp.MustCompile(`\b(?:drive|driving|commute)\b`), "commute", 45, 120},
	{regexp.MustCompile(`\b(?:party|concert|pub|bar|drinks?)\b`), "social", 180, 360},
	{regexp.MustCompile(`\b(?:work|office)\b`), "work", 480, 600},
}

// activityOf finds the template of a label.
func activityOf(label string) (key string, typical, max int) {
	l := strings.ToLower(label)
	for _, t := range activityTemplates {
		if t.re.MatchString(l) {
			return t.key, t.typical, t.maxMinutes
		}
	}
	return "", 0, 0
}

var (
	contractions = strings.NewReplacer("’", "'", "i'm ", "i am ", "im ", "i am ", "gonna ", "going to ", "i'll ", "i will ",
		"we're ", "we are ", "headin ", "heading ", "goin ", "going ")
	reSleep = regexp.MustCompile(`\b(?:(?:going|off|heading|headed|go)\s+to\s+(?:sleep|bed)|good\s*night|night\s+night|time\s+(?:for|to)\s+(?:bed|sleep)|hitting\s+the\s+(?:sack|hay)|calling\s+it\s+a\s+night|turning\s+in)\b`)
	reNap   = regexp.MustCompile(`\b(?:take|taking|have|having|grab|grabbing)\s+a\s+(?:quick\s+)?nap\b`)
	reBRB   = regexp.MustCompile(`\b(?:brb|be\s+right\s+back|back\s+in\s+(?:a\s+(?:few|sec|second|minute|min|bit|moment)|\d+\s*(?:min|mins|minutes|m|sec|secs)))\b`)
	reAfter = regexp.MustCompile(`\b(?:after|once)\s+([^,.!?;]{2,40}?),?\s+i\s+(?:will|am\s+going\s+to|plan\s+to|want\s+to)\s+([^.!?;]{2,60})`)
	reDest  = regexp.MustCompile(`\b(?:heading|headed|off|on\s+my\s+way|going|driving|walking|running|popping|leaving)\s+(?:out\s+)?(?:to|into|for)\s+(?:the\s+|my\s+|a\s+|an\s+)?(gym|office|work|store|shops?|supermarket|grocery\s+store|groceries|market|mall|doctor|dentist|hospital|airport|station|train\s+station|meeting|class|school|university|church|park|pool|bank|post\s+office|pharmacy|restaurant|cafe|café|pub|bar|cinema|movies|beach|library|hairdresser|barber|vet|party|concert|game|practice|interview|appointment|dinner|lunch|breakfast|run|walk|swim|jog|ride|drive|coffee|drinks?|beer|shower|nap)\b`)
	reOut   = regexp.MustCompile(`\b(?:heading|going|stepping|popping)\s+out\b`)
	reAbout = regexp.MustCompile(`\babout\s+to\s+([^.!?;,]{2,60})`)
	reGoing = regexp.MustCompile(`(?:^\s*|\bi\s+am\s+)going\s+to\s+([^.!?;,]{2,60})`)
	reDoing = regexp.MustCompile(`\bi\s+am\s+(eating|having|cooking|making|grabbing)\s+(dinner|lunch|breakfast|a\s+snack|food)\b`)
	reTail  = regexp.MustCompile(`(?i)\s+(?:now|right now|real quick|quickly|soon|for a bit|for a while|rn|lol|haha)\s*$`)
)

// actionWords: without one of them no pattern below can match.
var actionWords = []string{"sleep", "bed", "night", "nap", "brb", "right back", "back in", "head", "off", "on my way",
	"going", "goin", "gonna", "out", "about to", "after", "once", "eating", "having", "cooking", "making", "grabbing",
	"turning in", "sack", "hay", "driving", "walking", "running", "popping", "leaving", "stepping"}

func mayBeAction(lower string) bool {
	for _, w := range actionWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// nonActions are "going to" phrases that are not actions.
var nonActions = []string{"be ", "have to", "need", "try", "think", "say", "ask", "tell you", "let ", "get back to you", "answer", "reply", "explain", "send you"}

// DetectTemporalAction finds an action with near-term temporal relevance
// in a message (§6.2 B): going to sleep, brb, heading to the gym, about
// to…, after X I will…, I'm going to <do something>.
func DetectTemporalAction(text string) (Detected, bool) {
	if len(text) > maxDirectiveText {
		text = text[:maxDirectiveText]
	}
	orig := strings.Join(strings.Fields(text), " ")
	lo := strings.ToLower(orig)
	if !mayBeAction(lo) {
		return Detected{}, false
	}
	t := " " + lo + " "
	t = contractions.Replace(t)
	cased := func(phrase string) string { return restoreCase(phrase, orig) }
	switch {
	case reNap.MatchString(t):
		return detected("Nap", kairos.ActionInProgress), true
	case reSleep.MatchString(t):
		return detected("Sleep", kairos.ActionInProgress), true
	case reBRB.MatchString(t):
		return detected("Be right back", kairos.ActionInProgress), true
	}
	if m := reAfter.FindStringSubmatch(t); m != nil {
		what := normalizeLabel(cased(m[2]))
		if what != "" {
			d := detected(what+" (after "+strings.TrimSpace(cased(m[1]))+")", kairos.ActionPlanned)
			d.Activity, _, _ = activityOf(m[2])
			return d, true
		}
	}
	if m := reDest.FindStringSubmatch(t); m != nil {
		dest := strings.Join(strings.Fields(m[1]), " ")
		switch dest {
		case "run", "walk", "swim", "jog", "ride", "drive", "coffee", "drink", "drinks", "beer", "shower", "nap":
			return detected("Go for a "+dest, kairos.ActionInProgress), true
		case "dinner", "lunch", "breakfast":
			return detected("Have "+dest, kairos.ActionInProgress), true
		case "work":
			return detected("Go to work", kairos.ActionInProgress), true
		}
		return detected("Go to the "+dest, kairos.ActionInProgress), true
	}
	if m := reDoing.FindStringSubmatch(t); m != nil {
		return detected("Have "+strings.TrimPrefix(m[2], "a "), kairos.ActionInProgress), true
	}
	if m := reAbout.FindStringSubmatch(t); m != nil {
		if l := normalizeLabel(cased(m[1])); l != "" && !isNonAction(m[1]) {
			return detected(l, kairos.ActionPlanned), true
		}
	}
	if m := reGoing.FindStringSubmatch(t); m != nil {
		if l := normalizeLabel(cased(m[1])); l != "" && !isNonAction(m[1]) {
			if strings.HasPrefix(m[1], "the ") || strings.HasPrefix(m[1], "my ") {
				l = "Go to " + strings.ToLower(l[:1]) + l[1:]
			}
			return detected(l, kairos.ActionPlanned), true
		}
	}
	if reOut.MatchString(t) {
		return detected("Head out", kairos.ActionInProgress), true
	}
	return Detected{}, false
}

func detected(label, status string) Detected {
	key, _, _ := activityOf(label)
	return Detected{Label: label, Activity: key, Status: status}
}

func isNonAction(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range nonActions {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// restoreCase finds phrase (lower case) in the original text and returns
// it with the original's letter case; phrase itself when not found.
func restoreCase(phrase, orig string) string {
	phrase = strings.TrimSpace(phrase)
	lo := strings.ToLower(orig)
	if len(lo) != len(orig) || phrase == "" {
		return phrase
	}
	if i := strings.Index(lo, phrase); i >= 0 {
		return orig[i : i+len(phrase)]
	}
	return phrase
}

// maxLabel bounds a normalized label (§6.3: a short summary).
const maxLabel = 60

var reLead = regexp.MustCompile(`(?i)^(?:(?:ok|so|well|alright|hey)[,!]?\s+)*(?:i\s+am\s+|i'm\s+|im\s+|i\s+will\s+|i'll\s+|we\s+are\s+|we're\s+|i\s+)?(?:just\s+|now\s+|finally\s+)?(?:going\s+to\s+|gonna\s+|about\s+to\s+|heading\s+to\s+|off\s+to\s+|planning\s+to\s+|want\s+to\s+)?`)

// normalizeLabel turns a phrase into a short label: first person and
// "going to" dropped, filler at the end dropped, first letter upper case,
// at most 60 bytes cut at a word. It stores no more than a summary
// (store_quotes: false).
func normalizeLabel(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "’", "'")), " ")
	s = reLead.ReplaceAllString(s, "")
	trim := func(s string) string {
		return strings.TrimFunc(s, func(r rune) bool {
			return unicode.IsPunct(r) && r != ')' || unicode.IsSymbol(r) || unicode.IsSpace(r) || r > 0x2000 && !unicode.IsLetter(r)
		})
	}
	s = trim(s)
	for {
		n := trim(reTail.ReplaceAllString(s, ""))
		if n == s {
			break
		}
		s = n
	}
	if len(s) > maxLabel {
		cut := strings.LastIndexByte(s[:maxLabel], ' ')
		if cut < 20 {
			cut = maxLabel
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		s = strings.TrimSpace(s[:cut]) + "…"
	}
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// NormalizeLabel is normalizeLabel for callers outside the package.
func NormalizeLabel(s string) string { return normalizeLabel(s) }
