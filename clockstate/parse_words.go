package clockstate

import (
	"strconv"
	"strings"
)

// The words of a whole-text expression (issue 32), read before the rules
// run (normalizeWords): every word is vocabulary (a word with time
// meaning some rule or step reads), a number, a sentence word (a word the
// sentence around a time may hold: "remind me to", "please", "the
// meeting"), a filler (dropped), txt-speak (written as its word), a typo
// of exactly one vocabulary word (read as that word, with an assumption),
// or unknown. An unknown word inside the expression or right beside it
// makes the result a question naming it (parser.besideUnknown); a typo
// with two readings is a question offering both.

// vocabulary are the words with time meaning, lower case: the accounting
// step's lists, the rules' words and the zone words.
var vocabulary = func() map[string]bool {
	m := setOf(`a an at on in by of the this that next last coming past to from after before since until till til
through thru between during within inside for and or then again around about approx approximately roughly circa ish
every each other alternate once twice thrice times time same now ago later earlier hence soon soonish sometime someday
eventually shortly whenever later today tomorrow tonight yesterday tmr tmrw tomoz tonite morning mornings afternoon
afternoons evening evenings night nights eve noon midday midnight lunch lunchtime arvo breakfast dinner
monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays
sundays mon tue tues wed weds thu thur thurs fri sat sun weekday weekdays weekend weekends working business
january february march april may june july august september october november december jan feb mar apr jun jul aug
sep sept oct nov dec second seconds sec secs minute minutes min mins hour hours hr hrs day days week weeks wk wks
fortnight fortnights month months year years yr yrs decade decades h m s d w o'clock oclock clock sharp dot
precisely exactly half quarter quarters end start beginning mid middle early late close eod eow cob first thing
daily nightly weekly fortnightly monthly yearly annually am pm a.m p.m utc gmt zulu z zone timezone tz local my
your our coast west east eastern pacific central mountain standard daylight summer winter while bit few couple
wait hold until noonish et ct mt pt`)
	for _, ws := range []map[string]bool{strongWords, weakWords, leadWords, wholeWords, lowerAbbrevs, connectors, fillerWords} {
		for w := range ws {
			m[w] = true
		}
	}
	for w := range numberWords {
		m[w] = true
	}
	for _, places := range []map[string]string{placeIndex, zoneCities} {
		for k := range places {
			for _, w := range strings.Fields(k) {
				m[w] = true
			}
		}
	}
	return m
}()

// sentenceWords are the words a sentence around a time may hold: the
// request, its courtesy and what it is about. An unknown word right
// beside the time is asked about; these are not.
var sentenceWords = setOf(`i me my mine myself you your yours u we us our they them their he him his she her it its
what which who whom whose where when why how there here something anything everything nothing someone anyone
am is are was were be been being do does did done have has had will would shall should can could may might must
let lets let's i'm i'll i've it's don't can't won't that's there's what's we're we'll you're
remind reminder reminders ping nudge tell text message msg email mail call ring phone meet see visit go going come
leave get pick drop take bring buy pay send check book cancel move reschedule schedule set stop finish submit file
water feed walk clean wash cook make need want wake sleep study read write review prepare renew return collect
charge order fix start join watch listen practice practise run drive fly post put turn open shut lock plan note
save sign print update ask answer reply follow talk chat catch grab eat drink work working do deploy release ship
publish launch backup restart reboot upgrade install test run push merge build commit invite host attend arrive
have hand give show share play stream record edit draft finalise finalize confirm remember forget try
meeting appointment dentist doctor vet gym school office home house party class lesson exam test interview
flight train bus plane taxi bins bin trash rubbish garbage recycling laundry rent bill bills invoice taxes report
deadline mum mom dad mother father wife husband kids kid son daughter baby friend friends boss team client
customer plants plant dog cat pills meds medicine medication birthday anniversary oven kettle car bike keys
stuff things thing job task tasks project projects standup sync review demo call calls coffee tea drinks
town city centre center park church hospital store shop shops mall cafe restaurant bar pub library station
airport room kitchen garden court field zoom person teams slack
and or but so if than as because with without into onto up down out over off about for to from of at on in by
please pls plz thanks thank thx ok okay hey hi hello yes no not just also too only still really maybe probably
definitely again back away later soon quickly asap right now urgent important
some any all both each few many much more most less other another such own same new old good great big small
yours tours pours yeah text fast pass part will tell fine give live nice even right cup bank cheers people stretch plenty cardio plumber needful version released discuss water ever very true our tour four ways says pays lays`)

// nearMisses are real words one edit from a time word ("moth", "fist",
// "his"): read as themselves, but right beside the expression they are
// asked about ("Do you mean this by his?").
var nearMisses = setOf(`match marsh moon mouth moth weeds seeks peeks weak seek peek near dear tear bear wear
hear gear nest neat lost list lust vast cast lash pest paste pasta pact hall halt
calf tall fill hill kill mill pill beach reach teach peach form prom fire dive hive
line wine pine none noun neon threw tree thee sever weight sight fight light tight
height thirsty forth fort fist flour latter layer lager laser cater hater alter rafter dairy daisy
weakly mourning sundae jane tune dune jury duly judy lily thus seat salt weed sung sunk
pour sour his very`)

// fillerDrop are dropped from a whole-text expression wherever they
// stand ("1:02:03 um pm", "the 3rd please of May").
var fillerDrop = setOf(`please pls plz kindly um umm uh uhh erm er hmm just`)

// txtSpeak are the chat spellings written as their word before the rules
// run (the rules read "tmr", "tmrw", "2nite", "2moro" themselves).
var txtSpeak = map[string]string{"2day": "today", "nxt": "next", "b4": "before", "l8r": "later", "wknd": "weekend",
	"2mrw": "tomorrow", "tmw": "tomorrow", "2morow": "tomorrow", "mrng": "morning", "aftn": "afternoon",
	"evng": "evening", "tonyt": "tonight", "2nyt": "tonight"}

// typoTargets are the vocabulary words a typo may be read as, grouped by
// meaning (a group's words read the same: "june", "jun"). Words of fewer
// than four letters are no target: too many real words lie one letter
// from "mon" or "sat".
var typoTargets = func() []typoTarget {
	groups := [][]string{{"monday"}, {"tuesday", "tues"}, {"wednesday", "weds"}, {"thursday", "thurs", "thur"}, {"friday"},
		{"saturday"}, {"sunday"}, {"mondays"}, {"tuesdays"}, {"wednesdays"}, {"thursdays"}, {"fridays"}, {"saturdays"},
		{"sundays"}, {"january"}, {"february"}, {"march"}, {"april"}, {"june"}, {"july"}, {"august"}, {"september", "sept"},
		{"october"}, {"november"}, {"december"}, {"today"}, {"tomorrow", "tmrw"}, {"tonight", "tonite"}, {"yesterday"},
		{"morning", "mornings"}, {"afternoon", "afternoons"}, {"evening", "evenings"}, {"night", "nights"}, {"noon"},
		{"midnight"}, {"midday"}, {"lunchtime"}, {"minute", "minutes", "mins"}, {"hour", "hours"}, {"second", "seconds", "secs"},
		{"days"}, {"week", "weeks"}, {"month", "months"}, {"year", "years"}, {"fortnight"}, {"weekend", "weekends"},
		{"weekday", "weekdays"}, {"every"}, {"each"}, {"daily"}, {"weekly"}, {"monthly"}, {"yearly"}, {"annually"},
		{"until", "till"}, {"between"}, {"before"}, {"after"}, {"later"}, {"earlier"}, {"next"}, {"last"}, {"past"},
		{"o'clock"}, {"quarter"}, {"half"}, {"three"}, {"four"}, {"five"}, {"seven"}, {"eight"}, {"nine"}, {"eleven"},
		{"twelve"}, {"twenty"}, {"thirty"}, {"forty"}, {"fifty"}, {"fifteen"}, {"first"}, {"third"}, {"fourth"},
		{"sometime"}, {"from"}, {"this"}}
	var out []typoTarget
	for g, ws := range groups {
		for _, w := range ws {
			out = append(out, typoTarget{word: w, group: g, mask: letterMask(w)})
		}
	}
	return out
}()

type typoTarget struct {
	word  string
	group int
	mask  uint32
}

// letterMask is the set of letters of w (a-z), for a quick distance bound:
// each edit changes at most two letters of the set.
func letterMask(w string) uint32 {
	var m uint32
	for i := 0; i < len(w); i++ {
		if c := w[i] | 0x20; c >= 'a' && c <= 'z' {
			m |= 1 << (c - 'a')
		}
	}
	return m
}

// readTypo is the vocabulary word w (lower case, three letters or more)
// is a typo of: within one edit (two from seven letters on; a swap of two
// neighbouring letters is one; a word of three letters only into one of
// four: "wek", "trw"), the nearest. ok is false when no word is
// that near; two words of different meaning at the same distance are
// both returned (a question), nearer ones first.
func readTypo(w string) (words []string, ok bool) {
	maxd, minLen := 1, 4
	if len(w) >= 7 {
		maxd = 2
	}
	if len(w) == 3 {
		minLen = 4 // "wek", "trw": only into a word of four letters ("week", "tmrw")
	}
	mask := letterMask(w)
	best, bestGroup := maxd+1, -1
	for _, t := range typoTargets {
		if d := len(t.word) - len(w); d > maxd || -d > maxd || len(t.word) < minLen || len(w) == 3 && len(t.word) != 4 || popcount(mask^t.mask) > 2*maxd {
			continue
		}
		d := osaDistance(w, t.word, maxd+1)
		switch {
		case d > maxd || d > best:
		case d < best:
			best, bestGroup, words = d, t.group, []string{t.word}
		case d == best && t.group != bestGroup && !containsGroup(words, t.group):
			words = append(words, t.word)
		}
	}
	return words, len(words) > 0
}

func containsGroup(words []string, g int) bool {
	for _, w := range words {
		for _, t := range typoTargets {
			if t.word == w && t.group == g {
				return true
			}
		}
	}
	return false
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// osaDistance is the optimal-string-alignment distance of a and b (edits:
// insert, delete, substitute, swap two neighbours), or limit when it is
// limit or more.
func osaDistance(a, b string, limit int) int {
	if len(a) > 32 || len(b) > 32 {
		return limit
	}
	var rows [3][33]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			low = min(low, v)
		}
		if low >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit)
}

// wordClass is what normalizeWords makes of one word.
type wordClass int

const (
	wordKnown   wordClass = iota // vocabulary, a number or a sentence word
	wordFiller                   // dropped
	wordRewrite                  // txt-speak or a typo, written as its word
	wordTwo                      // a typo of two words: asked
	wordUnknown
)

// classifyWord says what w (as typed) is and, for a rewrite, its word;
// near says it is a near miss. The known words are looked up without an
// allocation (most words are known).
func classifyWord(w string) (class wordClass, words []string, near bool) {
	var buf [48]byte
	t := strings.Trim(w, "'")
	if len(t) > len(buf) {
		return wordKnown, nil, false // no word of ours is that long: the rules' business
	}
	lo := buf[:len(t)]
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lo[i] = c
	}
	if fillerDrop[string(lo)] {
		return wordFiller, nil, false
	}
	if len(lo) == 0 || vocabulary[string(lo)] || sentenceWords[string(lo)] || len(lo) > 2 && string(lo[len(lo)-2:]) == "'s" &&
		(vocabulary[string(lo[:len(lo)-2])] || sentenceWords[string(lo[:len(lo)-2])]) {
		return wordKnown, nil, nearMisses[string(lo)]
	}
	if nearMisses[string(lo)] {
		return wordKnown, nil, true
	}
	if t, ok := txtSpeak[string(lo)]; ok {
		return wordRewrite, []string{t}, false
	}
	if !isLetters(string(lo)) {
		return wordKnown, nil, false // a number, a stamp, a mixed token: the rules' business
	}
	if len(lo) < 3 {
		return wordUnknown, nil, false
	}
	if ws, ok := readTypo(string(lo)); ok {
		if len(ws) > 1 {
			return wordTwo, ws, false
		}
		return wordRewrite, ws, false
	}
	return wordUnknown, nil, false
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && c != '\'' {
			return false
		}
	}
	return true
}

// normalized is a whole-text expression as the rules read it.
type normalized struct {
	text        string
	assumptions []string
	question    string // a typo with two readings
	unknown     map[string]bool
	near        bool // a near miss ("moth", "his") is in the text
}

// normalizeWords rewrites text word by word (see the top of this file):
// fillers dropped, txt-speak and typos written as their words, white
// space runs made one space. Unknown words are kept and listed. A text
// with nothing to rewrite is returned as it is, with no allocation but
// its lists.
func normalizeWords(text string) normalized {
	var n normalized
	changed := false
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		if j == i { // white space: one space between words is as it is
			changed = changed || text[i] != ' ' || i == 0 || i+1 == len(text) || isSpace(text[i+1])
			i++
			continue
		}
		if tok := n.token(text[i:j]); tok != text[i:j] {
			changed = true
		}
		i = j
	}
	if !changed {
		n.text = text
		return n
	}
	fields := strings.Fields(text)
	m := normalized{}
	for k, f := range fields {
		fields[k] = m.token(f)
	}
	m.text = strings.Join(strings.Fields(strings.Join(fields, " ")), " ")
	return m
}

// token normalizes one space-separated token: its word (the letters,
// digits and apostrophes inside its punctuation) is classified.
func (n *normalized) token(tok string) string {
	a, c := 0, len(tok)
	for a < c && !isRunByte(tok[a]) {
		a++
	}
	for c > a && !isRunByte(tok[c-1]) {
		c--
	}
	w := tok[a:c]
	if w == "" || strings.IndexFunc(w, func(r rune) bool { return !isRunByte(byte(r)) || r >= 0x80 }) >= 0 {
		return tok // "9:30", "a.m.", "25/12": the rules' business
	}
	class, words, near := classifyWord(w)
	n.near = n.near || near
	switch class {
	case wordFiller:
		return tok[:a] + tok[c:]
	case wordRewrite:
		if !txtSpoken(w) {
			n.assumptions = append(n.assumptions, "read "+strconv.Quote(w)+" as "+displayWord(words[0]))
		}
		return tok[:a] + sameCase(w, words[0]) + tok[c:]
	case wordTwo:
		if n.question == "" {
			n.question = "Do you mean " + displayWord(words[0]) + " or " + displayWord(words[1]) + " by " + strconv.Quote(w) + "?"
		}
	case wordUnknown:
		if n.unknown == nil {
			n.unknown = map[string]bool{}
		}
		n.unknown[asciiLower(w)] = true
	}
	return tok
}

func txtSpoken(w string) bool {
	_, ok := txtSpeak[asciiLower(w)]
	return ok
}

// displayWord is a word as a person writes it: weekdays and months with
// a capital.
func displayWord(w string) string {
	if fullWeekdays[w] || fullWeekdays[strings.TrimSuffix(w, "s")] || monthOf(w) != 0 && len(w) > 3 {
		return strings.ToUpper(w[:1]) + w[1:]
	}
	return w
}

// sameCase writes repl with the first letter of w's case.
func sameCase(w, repl string) string {
	if w != "" && w[0] >= 'A' && w[0] <= 'Z' {
		return strings.ToUpper(repl[:1]) + repl[1:]
	}
	return repl
}
