package memory

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// args are the tool's parameters exactly as CONTRACT.md names them.
type args struct {
	Action           string       `json:"action"`
	Store            string       `json:"store"`
	Content          string       `json:"content"`
	Tags             []string     `json:"tags"`
	Category         string       `json:"category"`
	PursuingPriority toolutil.Int `json:"pursuingPriority"`
	SummaryType      string       `json:"summary_type"`
	PeriodKey        string       `json:"period_key"`
	ChatID           string       `json:"chat_id"`
	Query            string       `json:"query"`
	StoreFilter      string       `json:"store_filter"`
	Categories       []string     `json:"categories"`
	SummaryTypes     []string     `json:"summary_types"`
	From             string       `json:"from"`
	To               string       `json:"to"`
	PeriodKeyPrefix  string       `json:"period_key_prefix"`
	Limit            toolutil.Int `json:"limit"`
	MemoryID         string       `json:"memory_id"`
	// Layer appears only in seed 003's session-ending call
	// ({layer: "session", content: "__NEW_SESSION__", category: "system"});
	// it is accepted there and refused anywhere else.
	Layer string `json:"layer"`
}

// given lists the arguments that carry a value, by their JSON names.
func (a *args) given() map[string]bool {
	g := map[string]bool{}
	set := func(name string, ok bool) {
		if ok {
			g[name] = true
		}
	}
	set("store", a.Store != "")
	set("content", a.Content != "")
	set("tags", len(a.Tags) > 0)
	set("category", a.Category != "")
	set("pursuingPriority", a.PursuingPriority.Set)
	set("summary_type", a.SummaryType != "")
	set("period_key", a.PeriodKey != "")
	set("chat_id", a.ChatID != "")
	set("query", a.Query != "")
	set("store_filter", a.StoreFilter != "")
	set("categories", len(a.Categories) > 0)
	set("summary_types", len(a.SummaryTypes) > 0)
	set("from", a.From != "")
	set("to", a.To != "")
	set("period_key_prefix", a.PeriodKeyPrefix != "")
	set("limit", a.Limit.Set)
	set("memory_id", a.MemoryID != "")
	set("layer", a.Layer != "")
	return g
}

// allowed names the arguments each action reads.
var allowed = map[string][]string{
	ActionStore:  {"store", "content", "tags", "category", "pursuingPriority", "summary_type", "period_key", "chat_id"},
	ActionRecall: {"query", "store", "store_filter", "categories", "summary_types", "from", "to", "period_key_prefix", "limit"},
	ActionList:   {"store", "store_filter", "categories", "summary_types", "from", "to", "period_key_prefix", "limit"},
	ActionForget: {"memory_id"},
}

// call is a validated invocation.
type call struct {
	action     string
	newSession bool
	memory     *kairos.Memory      // store
	filter     kairos.MemoryFilter // recall, list
	memoryID   string              // forget
}

func (t *Tool) parse(inv *kairos.ToolInvocation) (*call, error) {
	var a args
	if err := toolutil.DecodeArgs(inv.Arguments, &a); err != nil {
		return nil, err
	}
	if inv.UserKey == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "memory needs to know whose memories these are")
	}
	if a.Action == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"action\" is required (one of %s)", strings.Join(Actions, ", "))
	}
	if err := toolutil.OneOf("action", a.Action, Actions...); err != nil {
		return nil, err
	}
	if !t.enabled[a.Action] {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "memory action %q is disabled by the policy", a.Action)
	}
	c := &call{action: a.Action}
	if a.Action == ActionStore && strings.TrimSpace(a.Content) == NewSessionMarker {
		c.newSession = true
		return c, nil
	}
	given := a.given()
	for _, name := range sortedKeys(given) {
		if !contains(allowed[a.Action], name) {
			return nil, kairos.Errorf(kairos.EINVALID, "argument %q is not used by action %q", name, a.Action)
		}
	}
	now := inv.Now
	if now.IsZero() {
		now = t.now()
	}
	var err error
	switch a.Action {
	case ActionStore:
		c.memory, err = storeArgs(&a, given, inv, now)
	case ActionRecall, ActionList:
		c.filter, err = filterArgs(&a, given, now)
		c.filter.UserKey = inv.UserKey
		if a.Action == ActionRecall {
			c.filter.Query = strings.TrimSpace(a.Query)
			if c.filter.Query == "" {
				err = firstErr(err, kairos.Errorf(kairos.EINVALID, "argument \"query\" is required for recall (use list to browse)"))
			} else if utf8.RuneCountInString(c.filter.Query) > MaxQueryLen {
				err = firstErr(err, kairos.Errorf(kairos.EINVALID, "argument \"query\" is longer than %d characters", MaxQueryLen))
			}
		}
	case ActionForget:
		c.memoryID = strings.TrimSpace(a.MemoryID)
		if c.memoryID == "" {
			err = kairos.Errorf(kairos.EINVALID, "argument \"memory_id\" is required for forget")
		}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for _, name := range allNames {
		if m[name] {
			out = append(out, name)
		}
	}
	return out
}

// allNames is every argument in schema order (for stable messages).
var allNames = []string{"action", "store", "content", "tags", "category", "pursuingPriority", "summary_type", "period_key",
	"chat_id", "query", "store_filter", "categories", "summary_types", "from", "to", "period_key_prefix", "limit", "memory_id", "layer"}

func storeArgs(a *args, given map[string]bool, inv *kairos.ToolInvocation, now time.Time) (*kairos.Memory, error) {
	store := a.Store
	if store == "" {
		store = kairos.StoreUserMemory
		if given["summary_type"] || given["period_key"] {
			store = kairos.StoreSummaries
		}
	}
	if err := toolutil.OneOf("store", store, kairos.StoreUserMemory, kairos.StoreSummaries); err != nil {
		return nil, err
	}
	content := strings.TrimSpace(a.Content)
	tags, err := cleanTags(a.Tags)
	if err != nil {
		return nil, err
	}
	m := &kairos.Memory{UserKey: inv.UserKey, Store: store, Content: content, Tags: tags, CreatedAt: now}
	if store == kairos.StoreUserMemory {
		for _, name := range []string{"summary_type", "period_key", "chat_id"} {
			if given[name] {
				return nil, kairos.Errorf(kairos.EINVALID, "argument %q is only for store \"summaries\"", name)
			}
		}
		if n := utf8.RuneCountInString(content); n > MaxUserMemoryLen {
			return nil, kairos.Errorf(kairos.EINVALID, "argument \"content\" is %d characters; a user memory holds at most %d", n, MaxUserMemoryLen)
		}
		m.Type = a.Category
		if m.Type == "" {
			m.Type = "fact"
		}
		if a.PursuingPriority.Set {
			p := a.PursuingPriority.Value
			m.PursuingPriority = &p
		}
		if err := m.Validate(); err != nil {
			return nil, err
		}
		return m, nil
	}
	for _, name := range []string{"category", "pursuingPriority"} {
		if given[name] {
			return nil, kairos.Errorf(kairos.EINVALID, "argument %q is only for store \"user_memory\"", name)
		}
	}
	if n := utf8.RuneCountInString(content); n > MaxSummaryLen {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"content\" is %d characters; a summary holds at most %d", n, MaxSummaryLen)
	}
	if a.SummaryType == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"summary_type\" is required for store \"summaries\"")
	}
	m.Type = a.SummaryType
	m.PeriodKey = strings.TrimSpace(a.PeriodKey)
	if m.PeriodKey == "" {
		m.PeriodKey = calendar.PeriodKey(m.Type, now)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	m.ChatID = strings.TrimSpace(a.ChatID)
	if m.Type == kairos.SummaryConversation {
		if m.ChatID == "" {
			m.ChatID = inv.SessionID
		}
	} else if m.ChatID != "" {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"chat_id\" is only for summary_type %q", kairos.SummaryConversation)
	}
	return m, nil
}

// cleanTags trims and lower-cases tags and drops duplicates.
func cleanTags(in []string) ([]string, error) {
	var out []string
	for _, t := range in {
		t = strings.ToLower(strings.Join(strings.Fields(t), " "))
		if t == "" || contains(out, t) {
			continue
		}
		if utf8.RuneCountInString(t) > MaxTagLen {
			return nil, kairos.Errorf(kairos.EINVALID, "tag %q is longer than %d characters", clip(t, 20), MaxTagLen)
		}
		out = append(out, t)
	}
	if len(out) > MaxTags {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"tags\": at most %d tags", MaxTags)
	}
	return out, nil
}

func filterArgs(a *args, given map[string]bool, now time.Time) (kairos.MemoryFilter, error) {
	var f kairos.MemoryFilter
	store := a.StoreFilter
	if a.Store != "" {
		if store != "" && store != a.Store {
			return f, kairos.Errorf(kairos.EINVALID, "arguments \"store\" and \"store_filter\" disagree")
		}
		store = a.Store
	}
	if store != "" {
		if err := toolutil.OneOf("store_filter", store, kairos.StoreUserMemory, kairos.StoreSummaries); err != nil {
			return f, err
		}
	}
	f.Store = store
	for _, c := range a.Categories {
		if err := toolutil.OneOf("categories", c, kairos.MemoryCategories...); err != nil {
			return f, err
		}
		if !contains(f.Categories, c) {
			f.Categories = append(f.Categories, c)
		}
	}
	for _, s := range a.SummaryTypes {
		if err := toolutil.OneOf("summary_types", s, kairos.SummaryTypes...); err != nil {
			return f, err
		}
		if !contains(f.SummaryTypes, s) {
			f.SummaryTypes = append(f.SummaryTypes, s)
		}
	}
	if store == kairos.StoreSummaries && len(f.Categories) > 0 {
		return f, kairos.Errorf(kairos.EINVALID, "argument \"categories\" filters user_memory, but store_filter is summaries")
	}
	if store == kairos.StoreUserMemory && len(f.SummaryTypes) > 0 {
		return f, kairos.Errorf(kairos.EINVALID, "argument \"summary_types\" filters summaries, but store_filter is user_memory")
	}
	if p := strings.ToUpper(strings.TrimSpace(a.PeriodKeyPrefix)); p != "" {
		if store == kairos.StoreUserMemory {
			return f, kairos.Errorf(kairos.EINVALID, "argument \"period_key_prefix\" filters summaries, but store_filter is user_memory")
		}
		if len(p) > maxPeriodPrefixLen || strings.Trim(p, "0123456789-WQ") != "" {
			return f, kairos.Errorf(kairos.EINVALID, "argument \"period_key_prefix\": %q is not the start of a period key such as 2025-12 or 2025-W50", clip(a.PeriodKeyPrefix, 20))
		}
		f.PeriodKeyPrefix = p
	}
	var err error
	if f.From, err = parseTime("from", a.From, now.Location(), false); err != nil {
		return f, err
	}
	if f.To, err = parseTime("to", a.To, now.Location(), true); err != nil {
		return f, err
	}
	if f.From != nil && f.To != nil && f.From.After(*f.To) {
		return f, kairos.Errorf(kairos.EINVALID, "argument \"from\" is after \"to\"")
	}
	f.Limit = DefaultLimit
	if a.Limit.Set {
		if a.Limit.Value < 1 || a.Limit.Value > MaxLimit {
			return f, kairos.Errorf(kairos.EINVALID, "argument \"limit\": %d is out of range 1..%d", a.Limit.Value, MaxLimit)
		}
		f.Limit = a.Limit.Value
	}
	return f, nil
}

// parseTime reads an ISO-8601 timestamp: RFC 3339 with offset, a local
// date-time (in loc), or a date — the start of that day for "from", its
// last millisecond for "to".
func parseTime(name, s string, loc *time.Location, end bool) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return &t, nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		if end {
			t = t.AddDate(0, 0, 1).Add(-time.Millisecond)
		}
		return &t, nil
	}
	return nil, kairos.Errorf(kairos.EINVALID, "argument %q: %q is not an ISO-8601 timestamp (e.g. 2025-12-01 or 2025-12-01T09:00:00Z)", name, clip(s, 40))
}

// buildSpec is the schema offered to the model: every parameter of
// CONTRACT.md, with the enabled actions only, and terse descriptions (the
// whole request overhead has a token budget).
func buildSpec(actions []string) kairos.ToolSpec {
	enum := func(vs []string) string {
		b, _ := json.Marshal(vs)
		return string(b)
	}
	schema := `{
		"type": "object",
		"properties": {
			"action": {"type": "string", "enum": ` + enum(actions) + `},
			"store": {"type": "string", "enum": ["user_memory", "summaries"]},
			"content": {"type": "string"},
			"tags": {"type": "array", "items": {"type": "string"}},
			"category": {"type": "string", "enum": ` + enum(kairos.MemoryCategories) + `},
			"pursuingPriority": {"type": "integer", "description": "0-100"},
			"summary_type": {"type": "string", "enum": ` + enum(kairos.SummaryTypes) + `},
			"period_key": {"type": "string", "description": "YYYY-MM-DD|YYYY-Www|YYYY-MM|YYYY-Qn|YYYY"},
			"chat_id": {"type": "string"},
			"query": {"type": "string"},
			"store_filter": {"type": "string", "enum": ["user_memory", "summaries"]},
			"categories": {"type": "array", "items": {"type": "string"}},
			"summary_types": {"type": "array", "items": {"type": "string"}},
			"from": {"type": "string", "description": "ISO time"},
			"to": {"type": "string"},
			"period_key_prefix": {"type": "string"},
			"limit": {"type": "integer"},
			"memory_id": {"type": "string"}
		},
		"required": ["action"]
	}`
	return kairos.ToolSpec{
		Name: "memory",
		Description: "The user's long-term memory: user_memory (facts, goals, open loops…) and summaries (calendar roll-ups). " +
			"Recall before asking the user again; store lasting facts.",
		Parameters: toolutil.Schema(schema),
	}
}
