package tools

import (
	"slices"
	"sort"
	"strings"

	"github.com/kairos-agent/kairos"
)

// MaxExtraOffered bounds the skills and MCP tools a turn is offered when
// its sources hold more than that: the most relevant to the message (or
// named by it, or wanted) first; the others stay callable and reachable
// with more_tools.
const MaxExtraOffered = 6

// OnDemand reports whether tl is offered only when the turn asks for it.
func OnDemand(tl kairos.Tool) bool {
	_, ok := tl.(cued)
	return ok
}

// Offered splits a turn's tools into those it is offered: every built-in
// tool without cues; a cued built-in tool when the message cues or names
// it; skills and MCP tools (extra) all when there are no more than
// MaxExtraOffered, else those the message names or shares words with,
// the best MaxExtraOffered. A tool in sc.Wanted is always offered.
func Offered(builtin, extra []kairos.Tool, sc kairos.ToolScope) ([]kairos.Tool, []kairos.Tool) {
	msg := NewMessage(sc.Query)
	words := msg.Words
	var core []kairos.Tool
	for _, tl := range builtin {
		c, ok := tl.(cued)
		name := tl.Spec().Name
		if !ok || wanted(sc, words, name) || c.CuedBy(msg) {
			core = append(core, tl)
		}
	}
	if len(extra) <= MaxExtraOffered {
		return core, extra
	}
	type scored struct {
		tl    kairos.Tool
		i     int
		score int
	}
	var ss []scored
	for i, tl := range extra {
		spec := tl.Spec()
		if n := Relevance(msg, sc.Wanted, spec.Name, spec.Description); n > 0 {
			ss = append(ss, scored{tl, i, n})
		}
	}
	sort.SliceStable(ss, func(a, b int) bool { return ss[a].score > ss[b].score })
	ss = ss[:min(len(ss), MaxExtraOffered)]
	sort.Slice(ss, func(a, b int) bool { return ss[a].i < ss[b].i })
	out := make([]kairos.Tool, len(ss))
	for i, x := range ss {
		out[i] = x.tl
	}
	return core, out
}

// Named reports whether the message names the tool: its whole name, or
// the part after "__" (skill__invoices is named by "invoices"), as a word.
func Named(query, name string) bool { return isNamed(queryWords(query), name) }

func wanted(sc kairos.ToolScope, words []string, name string) bool {
	return slices.Contains(sc.Wanted, name) || isNamed(words, name)
}

func isNamed(words []string, name string) bool {
	name = strings.ToLower(name)
	_, short, found := strings.Cut(name, "__")
	return slices.Contains(words, name) || found && slices.Contains(words, short)
}

// queryWords splits a message into lower-case words of letters, digits
// and underscores (tool names keep theirs).
func queryWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r > 127)
	})
}

// namedScore is Relevance's score for a tool the message names or the
// turn wants, above any count of shared words.
const namedScore = 1000

// Relevance scores a skill or MCP tool for a message: namedScore when the
// message names it (Named) or the turn wants it (wanted), plus the
// message's terms (NewMessage) that start one of the words of its name
// (after "__": "skill" and a server's name say nothing of the tool) and
// description, or that one of them starts. Offered ranks skills and MCP
// tools by it, and the skills' own pick ranks by it too, so the two never
// disagree on what a message is about.
func Relevance(m Message, wanted []string, name, description string) int {
	n := 0
	if isNamed(m.Words, name) || slices.Contains(wanted, name) {
		n = namedScore
	}
	_, short, _ := strings.Cut(name, "__")
	own := queryWords(strings.ReplaceAll(short+" "+description, "_", " "))
	for _, q := range m.terms {
		for _, w := range own {
			if len(w) >= 3 && (strings.HasPrefix(w, q) || strings.HasPrefix(q, w)) {
				n++
				break
			}
		}
	}
	return n
}

// terms are the words of a message that can tell a tool's relevance: split
// at underscores, three letters or more, no stop word, no number.
func terms(words []string) []string {
	var out []string
	for _, w := range words {
		for _, q := range strings.Split(w, "_") {
			if len(q) >= 3 && !stopWords[q] && !isNumber(q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// stopWords are common words of three letters or more that say nothing
// of a tool.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("all and any are but can did for get got had has hey how its let may new not now off one our out " +
		"per put say see the too two use via was who why yes yet you " +
		"about after again also been before could does doing done from have hello here into just " +
		"know like make many more most much need only other over please should some than thank thanks that their them then " +
		"there these they thing this today very want what when where which while will with would your yours") {
		stopWords[w] = true
	}
}
