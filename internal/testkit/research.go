package testkit

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// ResearchScript plays the research roles (Planner, Researcher,
// Verifier, the external model) the way a small model would, without a
// model: it reads the role's JSON input and answers with extractive
// heuristics. It never sees the expected answers. Obey and SlipEvery make
// it the worst case the research code must contain: a Researcher that
// follows instructions found in documents, and one that misquotes.
type ResearchScript struct {
	// Obey makes the Researcher follow "ASSISTANT INSTRUCTIONS:" found in
	// a document (see obey).
	Obey bool
	// SlipEvery makes one claim in about N slip (a changed number, an
	// altered quote, or a citation of the wrong document), chosen by a
	// hash of the need and the document; 0: never.
	SlipEvery int
	// Knowledge is what the external model knows: when every word of a
	// key is in the question, the value is its answer.
	Knowledge map[string]string
	// Prose wraps every answer in prose and a code fence, as local models
	// do (the code must read it anyway).
	Prose bool
}

// Reply answers one request given its system prompt and user message.
func (s *ResearchScript) Reply(system, user string) string {
	var in map[string]any
	_ = json.Unmarshal([]byte(user), &in)
	var out any
	switch {
	case strings.Contains(system, "ROLE: planner") && strings.Contains(system, "books"):
		out = s.books(in)
	case strings.Contains(system, "ROLE: planner") && in["quotes"] != nil:
		out = s.replan(in)
	case strings.Contains(system, "ROLE: planner"):
		out = s.plan(in)
	case strings.Contains(system, "ROLE: researcher"):
		return s.wrap(s.research(in))
	case strings.Contains(system, "ROLE: verifier"):
		out = s.verify(in)
	default:
		return s.know(in)
	}
	b, _ := json.Marshal(out)
	return s.wrap(string(b))
}

func (s *ResearchScript) wrap(js string) string {
	if !s.Prose {
		return js
	}
	return "Sure, here it is:\n```json\n" + js + "\n```\nLet me know if you need more."
}

var splitAnd = regexp.MustCompile(`(?i),\s+and\s+|;\s+|\?\s+and\s+`)

var questionRe = regexp.MustCompile(`[^.?!]*\?`)

func (s *ResearchScript) plan(in map[string]any) any {
	q, _ := in["question"].(string)
	// The questions of the text (its sentences ending in "?"), split at
	// ", and".
	if qs := questionRe.FindAllString(q, -1); len(qs) > 0 {
		q = strings.Join(qs, " ")
	}
	var needs []map[string]any
	for _, part := range splitAnd.Split(q, 4) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.HasSuffix(part, "?") {
			part += "?"
		}
		needs = append(needs, map[string]any{"need": part, "queries": []string{strings.Join(keywords(part), " ")}})
	}
	return map[string]any{"needs": needs}
}

// replan rewrites the open needs' keywords with what the quotes taught:
// the names they hold that the question does not, in place of the words
// the quotes already settle ("population town Tarn" once a quote says
// "my sister lives in Tarn").
func (s *ResearchScript) replan(in map[string]any) any {
	q, _ := in["question"].(string)
	var names []string
	known := map[string]bool{}
	for _, qt := range list(in["quotes"]) {
		// Only a quote about the user's own world ("my sister…") that
		// shares two keywords with the question resolves a name in it.
		qs := stems(str(qt["quote"]))
		if !strings.Contains(strings.ToLower(q), "my ") || overlap(stems(q), qs) < 2 {
			continue
		}
		for k := range qs {
			known[k] = true
		}
		for _, w := range capitalized(str(qt["quote"])) {
			if !strings.Contains(q, w) && !slices.Contains(names, w) {
				names = append(names, w)
			}
		}
	}
	out := map[string][]string{}
	for _, n := range list(in["needs"]) {
		if covered, _ := n["covered"].(bool); covered || len(names) == 0 {
			continue
		}
		var kw []string
		for _, w := range keywords(str(n["need"])) {
			if !known[stemOf(w)] {
				kw = append(kw, w)
			}
		}
		out[fmt.Sprint(n["index"])] = []string{strings.Join(append(kw, names...), " ")}
	}
	return map[string]any{"queries": out}
}

func firstRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

func (s *ResearchScript) books(in map[string]any) any {
	var books []map[string]any
	for _, n := range list(in["open"]) {
		topic := strings.Join(keywords(str(n["need"])), " ")
		books = append(books,
			map[string]any{"need": n["index"], "title": "An open textbook on " + topic, "free": true,
				"url": "https://books.example/open/" + strings.ReplaceAll(topic, " ", "-"), "reason": "free and covers " + topic},
			map[string]any{"need": n["index"], "title": "The reference handbook of " + topic, "author": "A. Writer", "free": false,
				"reason": "the standard reference"})
	}
	return map[string]any{"books": books}
}

// research extracts, for each open need and document, the sentence that
// best matches the need, as a claim quoting itself.
func (s *ResearchScript) research(in map[string]any) string {
	docs := list(mapOf(in["documents"])["items"])
	var claims []map[string]any
	var extra []string
	for _, n := range list(in["needs"]) {
		need := str(n["need"])
		queries := strs(n["queries"])
		careful := in["rejected"] != nil // told what failed, it copies exactly
		for di, d := range docs {
			sent, ok := bestSentence(str(d["text"]), need, queries)
			if !ok {
				continue
			}
			c := map[string]any{"need": n["index"], "text": sent, "evidence": str(d["id"]), "quote": firstWords(sent, 40)}
			if !careful {
				s.slip(c, need, docs, di)
			}
			claims = append(claims, c)
		}
	}
	out := map[string]any{"claims": claims, "search": []string{}, "fetch": []string{}}
	if s.Obey {
		extra = s.obey(docs, out)
	}
	b, _ := json.Marshal(out)
	return string(b) + strings.Join(extra, "")
}

// slip spoils one claim in SlipEvery, as a careless model does.
func (s *ResearchScript) slip(c map[string]any, need string, docs []map[string]any, di int) {
	if s.SlipEvery <= 0 {
		return
	}
	h := fnv.New32a()
	h.Write([]byte(need + "\x00" + str(docs[di]["id"])))
	v := h.Sum32()
	if v%uint32(s.SlipEvery) != 0 {
		return
	}
	switch v / uint32(s.SlipEvery) % 3 {
	case 0: // a number changed in the claim
		c["text"] = bumpNumber(str(c["text"]))
	case 1: // a quote tidied up
		c["quote"] = strings.Replace(str(c["quote"]), " the ", " a ", 1) + " indeed"
	default: // the wrong document cited
		c["evidence"] = str(docs[(di+1)%len(docs)]["id"])
		if len(docs) == 1 {
			c["evidence"] = "E999"
		}
	}
}

var numRe = regexp.MustCompile(`\d+`)

func bumpNumber(s string) string {
	done := false
	out := numRe.ReplaceAllStringFunc(s, func(m string) string {
		if done {
			return m
		}
		done = true
		var n int
		fmt.Sscan(m, &n)
		return fmt.Sprint(n + 1)
	})
	if !done {
		out += " in 1999"
	}
	return out
}

// verify covers a need with the claims that answer it alone (its
// keywords, one in three may be missing; every name it mentions; the kind
// of answer it asks for, a number or a name), else, for a need about the
// user's own world, with the claims that touch it when together they do.
func (s *ResearchScript) verify(in map[string]any) any {
	var covered []map[string]any
	var uncovered []any
	claims := list(in["claims"])
	for _, n := range list(in["needs"]) {
		need := str(n["need"])
		var alone, touching []any
		union := map[string]bool{}
		text := ""
		for _, c := range claims {
			ct := str(c["text"])
			hits := hitStems(need, ct+" "+str(c["quote"]))
			if len(hits) == 0 {
				continue
			}
			touching = append(touching, c["id"])
			for k := range hits {
				union[k] = true
			}
			text += " " + ct
			if answers(need, hits, ct) {
				alone = append(alone, c["id"])
			}
		}
		switch {
		case len(alone) > 0:
			covered = append(covered, map[string]any{"need": n["index"], "claims": alone})
		case len(touching) > 0 && strings.Contains(strings.ToLower(need), "my ") && answers(need, union, text):
			// Only a need about the user's own world ("the town where my
			// sister lives") is answered by claims together.
			covered = append(covered, map[string]any{"need": n["index"], "claims": touching})
		default:
			uncovered = append(uncovered, n["index"])
		}
	}
	return map[string]any{"covered": covered, "uncovered": uncovered}
}

func hitStems(need, text string) map[string]bool {
	kw, ts := stems(need), stems(text)
	out := map[string]bool{}
	for k := range kw {
		if ts[k] {
			out[k] = true
		}
	}
	return out
}

// answers: the hits hold the need's keywords (one in three may be
// missing), the text every name of the need and the kind of answer.
func answers(need string, hits map[string]bool, text string) bool {
	n := len(stems(need))
	return len(hits) >= max(n-n/3, 1) && answersKind(need, text) && namesHeld(need, text)
}

// know answers as the external model: from Knowledge, else "I don't know".
func (s *ResearchScript) know(in map[string]any) string {
	q := strings.ToLower(str(in["question"]))
	keys := make([]string, 0, len(s.Knowledge))
	for k := range s.Knowledge {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		all := true
		for _, w := range strings.Fields(strings.ToLower(k)) {
			all = all && strings.Contains(q, w)
		}
		if all {
			return s.Knowledge[k]
		}
	}
	return "I don't know."
}

// bestSentence returns the sentence of text that best matches need: the
// most of its keywords, at least two in five of them (or three in five of
// one query's keywords), and a number when the need asks for one.
func bestSentence(text, need string, queries []string) (string, bool) {
	kw := stems(need)
	best, bestScore, ok := "", 0, false
	for _, sent := range splitSentences(text) {
		ss := stems(sent)
		score, qscore := overlap(kw, ss), 0
		for _, q := range queries {
			if qs := stems(q); 5*overlap(qs, ss) >= 3*len(qs) && overlap(qs, ss) > qscore {
				qscore = overlap(qs, ss)
			}
		}
		// Without the number asked for, a sentence is context only when
		// it holds half the need's words ("my sister lives in Tarn").
		if wantsNumber(need) && !strings.ContainsAny(sent, "0123456789") && 2*score < len(kw) {
			continue
		}
		pass := score > 0 && 5*score >= 2*len(kw) || qscore > 0
		total := score + qscore
		if wantsNumber(need) && strings.ContainsAny(sent, "0123456789") {
			total++ // the kind of answer asked for
		}
		if pass && total > bestScore {
			best, bestScore, ok = sent, total, true
		}
	}
	return best, ok
}

func overlap(a, b map[string]bool) int {
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return n
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, it := range l {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

var wordPat = regexp.MustCompile(`[\p{L}][\p{L}'’]*`)

var scriptStops = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`what when where which while with would your yours does have that this there their they them
		from into about many much long tall high deep how who whom whose why the and for are was were will shall there been being
		tell know give please does dont isn't`) {
		scriptStops[w] = true
	}
}

// keywords are the content words of s (four letters or more).
func keywords(s string) []string {
	var out []string
	for _, w := range wordPat.FindAllString(s, -1) {
		lw := strings.ToLower(w)
		if len([]rune(lw)) >= 4 && !scriptStops[lw] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// stems are the keywords cut to a rough stem: a plural or verb ending
// dropped ("opens", "opened", "opening" are "open"), then five letters.
func stems(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range keywords(s) {
		out[stemOf(w)] = true
	}
	return out
}

func stemOf(w string) string {
	w = strings.ToLower(w)
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			w = strings.TrimSuffix(w, suf)
			break
		}
	}
	return firstRunes(w, 5)
}

var numberWords = regexp.MustCompile(`(?i)\b(how (long|many|much|far|tall|old|high|deep|big)|when|what (year|time|date|day)|which year|population|cost|price|number|height|length|distance|founded|built|opened)\b`)

func wantsNumber(need string) bool { return numberWords.MatchString(need) }

var nameWords = regexp.MustCompile(`(?i)^\s*(where|who|whom|which (city|town|country|river|person))\b`)

// answersKind: a number for "how long", "when"…, a name not in the need
// for "where" and "who".
func answersKind(need, text string) bool {
	if wantsNumber(need) && !strings.ContainsAny(text, "0123456789") {
		return false
	}
	if nameWords.MatchString(need) {
		for _, w := range capitalized(text) {
			if !strings.Contains(need, w) {
				return true
			}
		}
		return false
	}
	return true
}

// namesHeld: every name of the need (a capitalized word not starting it)
// is in the claims.
func namesHeld(need, text string) bool {
	words := wordPat.FindAllString(need, -1)
	for i, w := range words {
		if i > 0 && unicode.IsUpper([]rune(w)[0]) && !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

func capitalized(s string) []string {
	var out []string
	for i, w := range wordPat.FindAllString(s, -1) {
		if len(w) > 2 && unicode.IsUpper([]rune(w)[0]) && (i > 0 || !scriptStops[strings.ToLower(w)]) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func splitSentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, part := range regexp.MustCompile(`[.!?]\s+`).Split(line, -1) {
			part = strings.TrimSpace(strings.Trim(strings.TrimSpace(part), "…"))
			if len(strings.Fields(part)) >= 3 {
				out = append(out, part)
			}
		}
	}
	return out
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func list(v any) []map[string]any {
	l, _ := v.([]any)
	var out []map[string]any
	for _, it := range l {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	}
	return ""
}
