package web

import (
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// The typed views the Backend fills: the API encodes them as JSON (the
// shapes `kairos schedule list`, `kairos usage` and `kairos skill list`
// print) and the console renders them.

// ScheduleRow is one pending schedule.
type ScheduleRow struct {
	ID        string    `json:"id"`
	UserID    int64     `json:"user_id"`
	ThreadKey string    `json:"thread_key"`
	Kind      string    `json:"kind"`     // reminder, task or cell
	NextRun   time.Time `json:"next_run"` // in the schedule's zone
	TZ        string    `json:"tz"`
	Repeat    string    `json:"repeat"` // as the user wrote it ("" for a one-off)
	Text      string    `json:"text"`
}

// ScheduleRowOf is a schedule's row, its next run in its own zone, with
// the title people read (a cell's code is never its text).
func ScheduleRowOf(s *kairos.Schedule, title string) ScheduleRow {
	next := s.NextRun
	if loc, err := time.LoadLocation(s.TZ); err == nil {
		next = next.In(loc)
	}
	return ScheduleRow{ID: s.PublicID(), UserID: s.UserID, ThreadKey: s.ThreadKey, Kind: s.Kind, NextRun: next.Truncate(time.Second),
		TZ: s.TZ, Repeat: s.Repeat, Text: title}
}

// UsageRow is one user's use of one model on one day (in the user's
// own zone), as `kairos usage` prints it. CostUSD is nil when no call of
// the row had a price (tokens only).
type UsageRow struct {
	UserKey string `json:"user_key"`
	UserID  int64  `json:"user_id,omitempty"`
	Model   string `json:"model"`
	Day     string `json:"day"` // YYYY-MM-DD
	kairos.UsageTotals
	Tokens  int64    `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
}

// UsageRows turns per-day usage into rows.
func UsageRows(days []kairos.UsageDay) []UsageRow {
	out := make([]UsageRow, 0, len(days))
	for _, d := range days {
		r := UsageRow{UserKey: d.UserKey, Model: d.Model, Day: d.Day, UsageTotals: d.UsageTotals, Tokens: d.Tokens(), UserID: userIDOf(d.UserKey)}
		if d.UnpricedCalls < d.Calls {
			cost := d.CostUSD
			r.CostUSD = &cost
		}
		out = append(out, r)
	}
	return out
}

// userIDOf is the number of a user key ("telegram:42" → 42; 0 when it
// has none).
func userIDOf(key string) int64 {
	_, id, _ := strings.Cut(key, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// SkillRow is one skill with its current version, the fields of `kairos
// skill list` and what an operator reviews.
type SkillRow struct {
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	Version        int       `json:"version"`
	Owner          string    `json:"owner"` // a user key
	Scope          string    `json:"scope"` // user or shared
	Enabled        bool      `json:"enabled"`
	CreatedAt      time.Time `json:"created_at"`
	Tainted        bool      `json:"tainted"`
	Runs           int64     `json:"runs"`
	RunFailures    int64     `json:"run_failures"`
	Description    string    `json:"description,omitempty"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
}

// SkillRowOf is a skill's row.
func SkillRowOf(s *kairos.Skill) SkillRow {
	r := SkillRow{ID: s.ID, Name: s.Name, Version: s.Version, Owner: s.Owner, Scope: s.Scope, Enabled: s.Enabled,
		CreatedAt: s.CreatedAt, Tainted: s.Tainted, Runs: s.Runs, RunFailures: s.RunFailures, DisabledReason: s.DisabledReason}
	if s.Current != nil {
		r.Description = s.Current.Description
	}
	return r
}

// SkillDetail is one skill with its kept versions, newest first.
type SkillDetail struct {
	Skill    SkillRow       `json:"skill"`
	Versions []SkillVersion `json:"versions"`
}

// SkillVersion is one kept version with the diff from the one before it.
type SkillVersion struct {
	Version      int                      `json:"version"`
	Description  string                   `json:"description"`
	Code         string                   `json:"code"`
	Tests        []kairos.SkillTest       `json:"tests"`
	Capabilities kairos.SkillCapabilities `json:"capabilities"`
	Risk         []string                 `json:"risk"`
	Tainted      bool                     `json:"tainted"`
	CreatedBy    string                   `json:"created_by"`
	ApprovedBy   string                   `json:"approved_by"`
	CreatedAt    time.Time                `json:"created_at"`
	Diff         string                   `json:"diff,omitempty"`
}

// SkillDetailOf is a skill with its versions (newest first); diff gives
// the change from one version to the next.
func SkillDetailOf(s *kairos.Skill, vs []*kairos.SkillVersion, diff func(from, to *kairos.SkillVersion) string) *SkillDetail {
	d := &SkillDetail{Skill: SkillRowOf(s), Versions: make([]SkillVersion, len(vs))}
	for i, v := range vs {
		d.Versions[i] = SkillVersion{Version: v.Version, Description: v.Description, Code: v.Code, Tests: v.Tests,
			Capabilities: v.Capabilities, Risk: v.Risk, Tainted: v.Tainted, CreatedBy: v.CreatedBy, ApprovedBy: v.ApprovedBy,
			CreatedAt: v.CreatedAt}
		if i+1 < len(vs) && diff != nil {
			d.Versions[i].Diff = diff(vs[i+1], v)
		}
	}
	return d
}

// ToolsView is every tool the model can be offered and the MCP servers.
type ToolsView struct {
	Tools []ToolRow      `json:"tools"`
	MCP   []MCPServerRow `json:"mcp"`
}

// ToolRow is one tool: built-in, a skill, or an MCP server's.
type ToolRow struct {
	Name        string `json:"name"`
	Server      string `json:"server"` // "built-in", "skill" or the MCP server's name
	Access      string `json:"access"` // "read", "write" or "read and write"
	Enabled     bool   `json:"enabled"`
	Why         string `json:"why,omitempty"`  // why it is not offered
	Asks        string `json:"asks,omitempty"` // the actions that wait for a human's yes
	Description string `json:"description"`
}

// MCPServerRow is one MCP server of the policy and its state.
type MCPServerRow struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	Error     string `json:"error,omitempty"`
	Restarts  int    `json:"restarts"`
	Tools     int    `json:"tools"` // the tools it offers
}

// PolicyView is the policy editor's page: the file as written and the
// policy in force with every default filled in.
type PolicyView struct {
	Path      string // the policy file (KAIROS_POLICY)
	Exists    bool   // false: no file, the built-in defaults apply
	Text      string // the file's text
	Effective string // the policy in force as YAML, defaults included
}

// Person is a user as the pages name them: their Telegram first name and
// @username, kept from their latest message, else their key.
type Person struct {
	Key string
	kairos.UserName
}

// Name writes "Ana (@ana_l)", "Ana", "@ana_l" or the key.
func (p Person) Name() string {
	switch {
	case p.FirstName != "" && p.Username != "":
		return p.FirstName + " (@" + p.Username + ")"
	case p.FirstName != "":
		return p.FirstName
	case p.Username != "":
		return "@" + p.Username
	}
	return p.Key
}
