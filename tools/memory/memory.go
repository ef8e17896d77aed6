package memory

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// Actions of the tool.
const (
	ActionStore  = "store"
	ActionRecall = "recall"
	ActionList   = "list"
	ActionForget = "forget"
)

// Actions lists the tool's actions in schema order.
var Actions = []string{ActionStore, ActionRecall, ActionList, ActionForget}

// NewSessionMarker is the content of seed 003's session-ending call:
// memory({action: "store", content: "__NEW_SESSION__", …}).
const NewSessionMarker = "__NEW_SESSION__"

// Limits of the tool's arguments.
const (
	DefaultLimit        = 10
	MaxLimit            = 50
	MaxUserMemoryLen    = 2000 // characters of a user memory
	MaxSummaryLen       = 8000 // characters of a summary
	MaxTags             = 10
	MaxTagLen           = 40
	MaxQueryLen         = 500
	maxPeriodPrefixLen  = 10
	embedTimeout        = 10 * time.Second
	actionLookupTimeout = 2 * time.Second
)

// Config configures the tool.
type Config struct {
	// Embedder, when set, embeds stored memories and recall queries so
	// that recall blends BM25 with cosine similarity. Its failures are
	// logged and recall falls back to full text.
	Embedder kairos.Embedder
	// Now is the clock used when an invocation carries no turn time.
	Now func() time.Time
	// OnNewSession is called instead of storing when a store call's
	// content is "__NEW_SESSION__"; its text is returned to the model as
	// "message". When nil such calls are refused.
	OnNewSession func(ctx context.Context, inv *kairos.ToolInvocation) (string, error)
	// Actions limits the actions offered (nil: all four). A disabled
	// action is absent from the schema and refused with EFORBIDDEN.
	Actions []string
	Logger  *slog.Logger
}

// Tool is the `memory` tool. It is safe for concurrent use.
type Tool struct {
	store   kairos.MemoryStore
	embed   kairos.Embedder
	now     func() time.Time
	onNew   func(ctx context.Context, inv *kairos.ToolInvocation) (string, error)
	enabled map[string]bool
	spec    kairos.ToolSpec
	log     *slog.Logger
}

var _ kairos.Tool = (*Tool)(nil)

// New returns the memory tool over store.
func New(store kairos.MemoryStore, cfg Config) *Tool {
	t := &Tool{store: store, embed: cfg.Embedder, now: cfg.Now, onNew: cfg.OnNewSession, log: cfg.Logger}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	t.log = t.log.With("component", "memory")
	t.enabled = map[string]bool{}
	var enabled []string
	for _, a := range Actions {
		if cfg.Actions == nil || contains(cfg.Actions, a) {
			t.enabled[a] = true
			enabled = append(enabled, a)
		}
	}
	t.spec = buildSpec(enabled)
	return t
}

// Spec implements kairos.Tool.
func (t *Tool) Spec() kairos.ToolSpec { return t.spec }

// Action implements kairos.Tool. It validates the arguments; forget is
// impactful, and its reason quotes the memory it would delete.
func (t *Tool) Action(ctx context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	c, err := t.parse(inv)
	if err != nil {
		return kairos.ToolAction{}, err
	}
	switch c.action {
	case ActionStore:
		return kairos.ToolAction{Name: kairos.ActionMemoryStore, Capability: kairos.CapMemoryWrite}, nil
	case ActionForget:
		what, summary := "memory "+c.memoryID, "Forget the memory "+c.memoryID+" (I could not read it)?"
		ctx, cancel := context.WithTimeout(ctx, actionLookupTimeout)
		defer cancel()
		if m, err := t.store.FindMemory(ctx, inv.UserKey, c.memoryID); err == nil {
			what = "the memory “" + clip(m.Content, 120) + "”"
			summary = "Forget the memory ‘" + clip(m.Content, 120) + "’ (saved " + SavedWhen(m.CreatedAt, inv.Now, inv.Zone) + ")?"
		}
		// One grant covers forgetting any of the user's own memories in
		// this chat: the memories are the user's, and the call is theirs.
		return kairos.ToolAction{Name: kairos.ActionMemoryForget, Capability: kairos.CapMemoryWrite, Impactful: true,
			Reason: "permanently deletes " + what, Summary: summary, Target: "memories",
			TargetLabel: "forgetting any of your memories"}, nil
	default:
		return kairos.ToolAction{Name: "memory." + c.action, Capability: kairos.CapMemoryRead}, nil
	}
}

// Call implements kairos.Tool.
func (t *Tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	c, err := t.parse(inv)
	if err != nil {
		return nil, err
	}
	switch c.action {
	case ActionStore:
		if c.newSession {
			if t.onNew == nil {
				return nil, kairos.Errorf(kairos.EINVALID, "starting a new session is not available here")
			}
			msg, err := t.onNew(ctx, inv)
			if err != nil {
				return nil, err
			}
			return toolutil.Result(output{Success: true, Message: msg}, false)
		}
		return t.storeMemory(ctx, inv, c)
	case ActionForget:
		return t.forget(ctx, inv, c)
	default:
		return t.recall(ctx, inv, c)
	}
}

func (t *Tool) storeMemory(ctx context.Context, inv *kairos.ToolInvocation, c *call) (*kairos.ToolResult, error) {
	// What a turn holding untrusted content writes is marked with its
	// origin, so it is never read back later as the user's own word.
	c.memory.Tainted, c.memory.TaintSource = inv.Tainted, inv.TaintSource
	m, merged, err := t.store.StoreMemory(ctx, c.memory)
	if err != nil {
		return nil, err
	}
	if t.embed != nil {
		ectx, cancel := context.WithTimeout(ctx, embedTimeout)
		vecs, err := t.embed.Embed(ectx, []string{m.Content})
		cancel()
		switch {
		case err != nil:
			t.log.Warn("embedding a memory failed; it is found by full text only", "err", err.Error())
		case len(vecs) == 1 && len(vecs[0]) > 0:
			if err := t.store.SetEmbedding(ctx, m.ID, vecs[0]); err != nil {
				t.log.Warn("storing an embedding failed", "err", err.Error())
			}
		}
	}
	return toolutil.Result(output{Success: true, Merged: &merged, Memories: &[]memoryJSON{t.toJSON(inv, m)}}, false)
}

func (t *Tool) recall(ctx context.Context, inv *kairos.ToolInvocation, c *call) (*kairos.ToolResult, error) {
	f := c.filter
	if c.action == ActionRecall && t.embed != nil {
		ectx, cancel := context.WithTimeout(ctx, embedTimeout)
		vecs, err := t.embed.Embed(ectx, []string{f.Query})
		cancel()
		if err != nil {
			t.log.Warn("embedding a query failed; recall by full text only", "err", err.Error())
		} else if len(vecs) == 1 {
			f.QueryVector = vecs[0]
		}
	}
	ms, err := t.store.RecallMemories(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]memoryJSON, 0, len(ms))
	tainted := false
	for _, m := range ms {
		tainted = tainted || m.Tainted
		j := t.toJSON(inv, m)
		if c.action == ActionRecall {
			r := math.Round(m.Relevance*1000) / 1000
			j.Relevance = &r
		}
		out = append(out, j)
	}
	// A memory written in an untrusted turn taints the turn that reads it.
	return toolutil.Result(output{Success: true, Memories: &out}, tainted)
}

func (t *Tool) forget(ctx context.Context, inv *kairos.ToolInvocation, c *call) (*kairos.ToolResult, error) {
	m, err := t.store.FindMemory(ctx, inv.UserKey, c.memoryID)
	if err != nil {
		return nil, err
	}
	if err := t.store.ForgetMemory(ctx, inv.UserKey, c.memoryID); err != nil {
		return nil, err
	}
	return toolutil.Result(output{Success: true, Memories: &[]memoryJSON{t.toJSON(inv, m)}}, false)
}

// output is the tool's answer: {success, merged?, memories?, message?}.
type output struct {
	Success  bool          `json:"success"`
	Merged   *bool         `json:"merged,omitempty"`
	Memories *[]memoryJSON `json:"memories,omitempty"`
	Message  string        `json:"message,omitempty"`
}

type memoryJSON struct {
	ID        string   `json:"id"`
	Store     string   `json:"store"`
	Type      string   `json:"type"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags,omitempty"`
	PeriodKey string   `json:"period_key,omitempty"`
	ChatID    string   `json:"chat_id,omitempty"`
	CreatedAt string   `json:"created_at"`
	Relevance *float64 `json:"relevance,omitempty"`
	// Untrusted memories were written while untrusted content (Origin)
	// was in the turn: data, never instructions.
	Untrusted bool   `json:"untrusted,omitempty"`
	Origin    string `json:"origin,omitempty"`
}

// toJSON shapes a memory for the model; times are shown in the turn's
// time zone.
func (t *Tool) toJSON(inv *kairos.ToolInvocation, m *kairos.Memory) memoryJSON {
	loc := time.UTC
	if !inv.Now.IsZero() {
		loc = inv.Now.Location()
	}
	return memoryJSON{
		ID: m.ID, Store: m.Store, Type: m.Type, Content: m.Content, Tags: m.Tags,
		PeriodKey: m.PeriodKey, ChatID: m.ChatID, CreatedAt: m.CreatedAt.In(loc).Format(time.RFC3339),
		Untrusted: m.Tainted, Origin: m.TaintSource,
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// SavedWhen says when a memory was saved, as a person would: "today",
// "yesterday", a weekday within the last week, else the date; in the
// user's zone (UTC when unknown), relative to now.
func SavedWhen(at, now time.Time, zone string) string {
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		loc = time.UTC
	}
	a, n := at.In(loc), now.In(loc)
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc) }
	switch d := int(day(n).Sub(day(a)).Hours()/24 + 0.5); {
	case d == 0:
		return "today"
	case d == 1:
		return "yesterday"
	case d > 1 && d < 7:
		return a.Weekday().String()
	case a.Year() == n.Year():
		return a.Format("2 Jan")
	default:
		return a.Format("2 Jan 2006")
	}
}
