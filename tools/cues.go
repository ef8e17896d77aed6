package tools

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cued is a built-in tool offered on demand: only when CuedBy finds the
// message calls for it, the message names it, or the turn wants it. A
// built-in tool that is not cued (search, memory) is always offered.
type cued interface{ CuedBy(m Message) bool }

// Message is what a tool's cues and relevance are matched against: the
// message's text and its lower-case words (letters, digits, underscores;
// "17:30" is two), split once per message by NewMessage.
type Message struct {
	Text  string
	Words []string
	terms []string // Relevance's words (terms)
}

// NewMessage splits text into its words.
func NewMessage(text string) Message {
	words := queryWords(text)
	return Message{Text: text, Words: words, terms: terms(words)}
}

// HasCue reports whether one of the words starts with one of the cues
// ("remind" cues "reminders").
func HasCue(words, cues []string) bool {
	for _, w := range words {
		for _, c := range cues {
			if strings.HasPrefix(w, c) {
				return true
			}
		}
	}
	return false
}

// timeFrames are the words before a bare number that make it a time:
// "at 7", "in 20", "by 9".
var timeFrames = []string{"at", "by", "in", "until", "till", "before", "after", "from", "around"}

// timeUnits start the words after a number that make it a time or a
// span: "7 pm", "20 minutes", "3 days".
var timeUnits = []string{"am", "pm", "sec", "min", "hour", "hr", "day", "week", "month", "year"}

// MentionsTime reports whether the words hold a clock time or a span: a
// number with a clock or unit suffix, hh:mm (split by queryWords into two
// numbers), or a number after at, by, in, until, till, before or after.
func MentionsTime(words []string) bool {
	for i, w := range words {
		n := 0
		for n < len(w) && w[n] >= '0' && w[n] <= '9' {
			n++
		}
		if n == 0 || n > 2 {
			continue
		}
		switch w[n:] {
		case "am", "pm", "h", "hr", "hrs", "m", "min", "mins", "d", "s", "sec", "secs", "w":
			return true
		case "":
		default:
			continue
		}
		if i > 0 && slices.Contains(timeFrames, words[i-1]) {
			return true
		}
		if i+1 < len(words) && (isNumber(words[i+1]) && len(words[i+1]) == 2 || HasCue(words[i+1:i+2], timeUnits)) {
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	return w != "" && strings.Trim(w, "0123456789") == ""
}

// arithmeticSymbols join two numbers into a calculation whatever the
// spacing ("17*23", "2^10", "3 × 4"); spacedSymbols only with a space on
// both sides, since unspaced they are dates, ranges and sizes
// ("2026-11-28", "11/28", "3-5 days", "1920x1080").
const (
	arithmeticSymbols = "*×÷^+"
	spacedSymbols     = "-−/xX"
)

// arithmeticWords join two numbers ("17 times 23", "9 divided by 4");
// arithmeticAfter follow one ("12 squared", "5 factorial").
var (
	arithmeticWords = []string{"times", "plus", "minus", "divided", "multiplied", "mod", "modulo", "power"}
	arithmeticAfter = []string{"squared", "cubed", "factorial"}
)

// MentionsArithmetic reports whether the message holds a calculation: two
// numbers joined by an operator symbol or word, a number squared, cubed or
// factorial, a percentage of something ("15% of 240"), or a square root.
func MentionsArithmetic(m Message) bool {
	return symbolArithmetic(m.Text) || wordArithmetic(m.Words)
}

func symbolArithmetic(s string) bool {
	lower := strings.ToLower(s)
	if strings.Contains(lower, "sqrt") || strings.ContainsRune(s, '√') {
		return true
	}
	for i := 0; i < len(s); {
		end := numberEnd(s, i)
		if end == i {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if operatorFollows(s[end:]) {
			return true
		}
		i = end
	}
	return false
}

// numberEnd returns the end of the number starting at i ("1,234.5"), or i
// when none starts there (a digit inside a word, "v2", starts none).
func numberEnd(s string, i int) int {
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			return i
		}
	}
	j := i
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || (s[j] == '.' || s[j] == ',') && j > i && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
		j++
	}
	return j
}

// operatorFollows reports whether rest (what follows a number) starts an
// operation on a second number, or is a percentage of something.
func operatorFollows(rest string) bool {
	after := strings.TrimLeft(rest, " ")
	spaced := len(after) < len(rest)
	if strings.HasPrefix(after, "%") {
		return strings.HasPrefix(strings.TrimLeft(after[1:], " "), "of ")
	}
	op, n := utf8.DecodeRuneInString(after)
	if n == 0 {
		return false
	}
	switch {
	case strings.ContainsRune(arithmeticSymbols, op):
	case strings.ContainsRune(spacedSymbols, op) && spaced && strings.HasPrefix(after[n:], " "):
	default:
		return false
	}
	next := strings.TrimLeft(after[n:], " ")
	return next != "" && (next[0] >= '0' && next[0] <= '9' || next[0] == '(' || next[0] == '.')
}

func wordArithmetic(words []string) bool {
	for k, w := range words {
		switch {
		case slices.Contains(arithmeticAfter, w):
			if k > 0 && isNumber(words[k-1]) {
				return true
			}
		case slices.Contains(arithmeticWords, w):
			if numberBeside(words[:k], -1) && numberBeside(words[k+1:], 1) {
				return true
			}
		}
	}
	return false
}

// linkWords may stand between an operator word and its number: "divided
// by 4", "2 raised to the power of 10".
var linkWords = []string{"by", "to", "the", "of", "raised"}

// numberBeside reports whether a number is next to the operator in words
// (dir -1: the words before it, read backwards; 1: the words after it),
// with only link words between.
func numberBeside(words []string, dir int) bool {
	for i := 0; i < min(4, len(words)); i++ {
		w := words[i]
		if dir < 0 {
			w = words[len(words)-1-i]
		}
		if isNumber(w) {
			return true
		}
		if !slices.Contains(linkWords, w) {
			return false
		}
	}
	return false
}
