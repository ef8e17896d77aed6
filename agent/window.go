package agent

import (
	"encoding/json"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/kairos-agent/kairos"
)

// The prompt is fitted into the model's context window: the system
// prompt, the user's message and the tools are counted first, room is
// kept for the answer (agent.max_reply_tokens, capped by the model's
// max_output_tokens), and the history gets what is left, newest first,
// never more than agent.history_tokens. Older turns fold into the running
// summary, which the system prompt carries.

// windowMargin is kept free of the window for what the chat template
// adds around each message and for the difference between a count and
// the server's own tokenizer.
const windowMargin = 20 // parts of the window: 5 %

// tokenCounter counts with Config.CountTokens and remembers the counts of
// stored messages, which never change.
type tokenCounter struct {
	count func(model, text string) int
	mu    sync.Mutex
	cache map[msgKey]int
	texts map[string]int // model + "\x00" + paragraph → count (paragraphs)
	specs map[uint64]int // a tool set's fingerprint → count (toolTokens)
}

type msgKey struct {
	id    int64
	model string
}

const maxCachedCounts = 200_000

func (tc *tokenCounter) text(model, s string) int {
	if s == "" {
		return 0
	}
	if tc.count == nil {
		return EstimateTokens(s)
	}
	return tc.count(model, s)
}

// message counts a stored message (its text, its calls, and four tokens
// of framing), from the cache when it has been counted before.
func (tc *tokenCounter) message(model string, m *kairos.Message) int {
	k := msgKey{m.ID, model}
	if m.ID != 0 {
		if n, ok := cached(tc, &tc.cache, k); ok {
			return n
		}
	}
	n := tc.text(model, m.Content) + tc.text(model, toolCallsText(m.ToolCalls)) + 4
	if m.ID != 0 {
		remember(tc, &tc.cache, k, n, maxCachedCounts)
	}
	return n
}

// cached returns the count kept in m under k (tc.mu guards every cache).
func cached[K comparable](tc *tokenCounter, m *map[K]int, k K) (int, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	n, ok := (*m)[k]
	return n, ok
}

// remember keeps n in m under k; a cache that holds limit counts is
// emptied first.
func remember[K comparable](tc *tokenCounter, m *map[K]int, k K, n, limit int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if *m == nil || len(*m) >= limit {
		*m = map[K]int{}
	}
	(*m)[k] = n
}

// learnWindow remembers a window a server stated in a context-length
// refusal, for models the policy says nothing about.
func (a *Agent) learnWindow(model string, window int) {
	if window > 0 {
		a.windows.Store(model, window)
	}
}

// contextWindow is the model's window: the policy's (or the built-in
// table's), else one a server stated, else 0 (unknown).
func (a *Agent) contextWindow(p *kairos.Policy, model string) int {
	if spec, _ := p.Model(model); spec.ContextWindow > 0 {
		return spec.ContextWindow
	}
	if w, ok := a.windows.Load(model); ok {
		return w.(int)
	}
	return 0
}

// historyBudget is the tokens the history may take in a turn whose
// system prompt, user message and tools take fixed tokens.
func (a *Agent) historyBudget(t *turn, model string, fixed int) int {
	budget := t.pol.Agent.HistoryTokens
	if budget <= 0 {
		budget = 6000
	}
	window := a.contextWindow(t.pol, model)
	if window <= 0 {
		return budget
	}
	reply := t.pol.Agent.MaxReplyTokens
	if spec, _ := t.pol.Model(model); spec.MaxOutputTokens > 0 && (reply <= 0 || reply > spec.MaxOutputTokens) {
		reply = spec.MaxOutputTokens
	}
	room := window - window/windowMargin - reply - fixed
	return max(min(budget, room), 0)
}

// paragraphs counts a long text paragraph by paragraph, remembering the
// paragraphs it has seen: a system prompt is mostly the same persona, tool
// guide and tool schemas turn after turn, and only the clock envelope and
// the memories change. A boundary costs about one token.
func (tc *tokenCounter) paragraphs(model, s string) int {
	if tc.count == nil {
		return EstimateTokens(s)
	}
	n := 0
	for _, p := range strings.Split(s, "\n\n") {
		n += tc.paragraph(model, p) + 1
	}
	return n - 1
}

const maxCachedTexts = 1024

func (tc *tokenCounter) paragraph(model, p string) int {
	if len(p) < 64 {
		return tc.text(model, p)
	}
	key := model + "\x00" + p
	if n, ok := cached(tc, &tc.texts, key); ok {
		return n
	}
	n := tc.text(model, p)
	remember(tc, &tc.texts, key, n, maxCachedTexts)
	return n
}

// fixedTokens counts what every request of the turn carries besides the
// history: the system prompt, the user's message, and the tools (as JSON
// in the request, or as text in the system prompt in prompted mode).
func (a *Agent) fixedTokens(t *turn, model, system, user string) int {
	n := a.tokens.paragraphs(model, system) + a.tokens.text(model, user) + 8
	mode := a.ToolMode(t.pol, model)
	if mode == kairos.ToolCallingOff {
		return n
	}
	var specs []kairos.ToolSpec
	for _, tl := range a.offeredTools(t) {
		specs = append(specs, fenceSpec(tl.Spec()))
	}
	if len(specs) == 0 {
		return n
	}
	return n + a.tokens.toolTokens(model, mode, specs)
}

// specSeed seeds the tool sets' fingerprints (one per process).
var specSeed = maphash.MakeSeed()

const maxCachedSpecs = 256

// toolTokens counts a tool set as the request carries it (JSON, or the
// text of prompted mode), once per set: the set is known by a fingerprint
// of its specs' contents, not by the tools' identity, because a tool's
// spec follows the policy (the code tool's) and scoped registries build
// new tool values every turn. Hashing the specs costs a fraction of
// marshalling them (BenchmarkFixedTokens).
func (tc *tokenCounter) toolTokens(model, mode string, specs []kairos.ToolSpec) int {
	var h maphash.Hash
	h.SetSeed(specSeed)
	h.WriteString(model)
	h.WriteByte(0)
	h.WriteString(mode)
	for _, s := range specs {
		h.WriteByte(0)
		h.WriteString(s.Name)
		h.WriteByte(0)
		h.WriteString(s.Description)
		h.WriteByte(0)
		h.Write(s.Parameters)
	}
	key := h.Sum64()
	n, ok := cached(tc, &tc.specs, key)
	if ok {
		return n
	}
	if mode == kairos.ToolCallingPrompted {
		n = tc.text(model, promptedToolText(specs))
	} else {
		b, _ := json.Marshal(specs)
		n = tc.text(model, string(b))
	}
	remember(tc, &tc.specs, key, n, maxCachedSpecs)
	return n
}
