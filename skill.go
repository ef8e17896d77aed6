package kairos

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Skills (seed 004's BUILD and UPDATE verbs): small JavaScript programs
// Kairos writes for itself, tested in the sandbox, approved by a human,
// versioned, and offered back to the model as tools named skill__<name>.

// Skill scopes.
const (
	SkillScopeUser   = "user"   // offered to its owner only
	SkillScopeShared = "shared" // shared by an operator with every user
)

// SkillToolPrefix prefixes the tool that runs a skill: skill__<name>.
const SkillToolPrefix = "skill__"

// Risk marks of a skill version (SkillVersion.Risk).
const (
	RiskNetworkRead  = "network_read"  // reads allow-listed hosts
	RiskNetworkWrite = "network_write" // may send data (POST/PUT/…)
	RiskSecrets      = "secrets"       // reads sealed secrets
	RiskLongRun      = "long_run"      // a test ran for a large part of the time budget
)

// Skill is a skill and its current version.
type Skill struct {
	ID    int64
	Name  string // [a-z][a-z0-9_]{0,39}
	Owner string // the user key of who asked for it
	Scope string // SkillScopeUser or SkillScopeShared
	// Enabled false keeps the skill (and its versions) but offers no tool.
	Enabled        bool
	DisabledReason string
	// Tainted: created or changed while untrusted content was in the turn;
	// its results are untrusted content. The mark never goes away.
	Tainted     bool
	TaintSource string
	Version     int // the current version
	// Failures counts consecutive failed runs (reset by a success); Runs
	// and RunFailures count every run.
	Failures    int
	Runs        int64
	RunFailures int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Current is the current version (filled by the store's readers).
	Current *SkillVersion
}

// SkillVersion is one approved version of a skill.
type SkillVersion struct {
	Version      int
	Description  string          // one line
	InputSchema  json.RawMessage // JSON Schema of run(input)'s argument
	Code         string          // JavaScript defining run(input)
	Tests        []SkillTest
	Capabilities SkillCapabilities
	Risk         []string // Risk* marks found when it was approved
	// Grant is what the approval showed the version may use; a run gets
	// the part of it the policy still allows. Nil for a version approved
	// before grants were kept (its grant is read from Risk and
	// Capabilities).
	Grant      *SkillGrant
	Tainted    bool   // written in a tainted turn
	CreatedBy  string // user key of who asked for it
	ApprovedBy string // user key of who approved it ("" for an import by the CLI)
	CreatedAt  time.Time
}

// SkillTest is one test of a skill: run(input) must give expect. Expect is
// any JSON value (compared as JSON), or {"$predicate": "<JS expression
// over result>"} which must be truthy.
type SkillTest struct {
	Name   string          `json:"name,omitempty"`
	Input  json.RawMessage `json:"input"`
	Expect json.RawMessage `json:"expect"`
}

// SkillCapabilities is what a skill may use beyond computing: network
// hosts (each within the policy's network.allow_list) and secret names
// (configured secrets). A skill never gets more than it declares, nor more
// than its approval showed (SkillGrant), nor more than the policy grants
// at the time it runs.
type SkillCapabilities struct {
	Hosts   []string `json:"hosts,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
}

// SkillGrant is what the approval of a skill version showed it may use:
// the hosts, the HTTP methods, the secrets and the cell budget in force
// when it was approved. A run gets the intersection of the grant and what
// the policy allows at the time of the run; anything wider (the operator
// allowed POST since, raised a budget) needs a new approval: an update.
type SkillGrant struct {
	Hosts   []string   `json:"hosts,omitempty"`
	Methods []string   `json:"methods,omitempty"` // empty: no network
	Secrets []string   `json:"secrets,omitempty"`
	Budget  CellBudget `json:"budget"`
}

// SkillTestResult is the outcome of one test.
type SkillTestResult struct {
	Name   string          `json:"name"`
	Passed bool            `json:"passed"`
	Got    json.RawMessage `json:"got,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// SkillFilter selects skills.
type SkillFilter struct {
	Owner string // "" every owner
	// WithShared adds the shared skills of other owners (with Owner set).
	WithShared bool
	// EnabledOnly leaves out disabled skills.
	EnabledOnly bool
}

// SkillStore keeps skills and their versions.
type SkillStore interface {
	// CreateSkill stores s with its first version v (s.Version becomes 1).
	// ECONFLICT when the owner already has a skill of that name; EINVALID
	// when a field is missing.
	CreateSkill(ctx context.Context, s *Skill, v *SkillVersion) error
	// FindSkill returns the owner's skill of that name, else a shared one
	// (owner "" looks among every owner, shared first); ENOTFOUND.
	FindSkill(ctx context.Context, owner, name string) (*Skill, error)
	// Skills lists skills with their current version, by name.
	Skills(ctx context.Context, f SkillFilter) ([]*Skill, error)
	// SkillVersions lists the kept versions of a skill, newest first.
	SkillVersions(ctx context.Context, id int64) ([]*SkillVersion, error)
	// AddSkillVersion makes v the current version if the skill's current
	// version is still `from` (ECONFLICT otherwise), in one transaction,
	// and deletes versions beyond the newest `keep` (never the current).
	// A tainted v marks the skill tainted with taintSource.
	AddSkillVersion(ctx context.Context, id int64, from int, v *SkillVersion, keep int, taintSource string) error
	// SetSkillVersion makes a kept version current (rollback); ENOTFOUND
	// when it is not kept.
	SetSkillVersion(ctx context.Context, id int64, version int) error
	// SetSkillEnabled enables or disables a skill (enabling resets its
	// consecutive failures).
	SetSkillEnabled(ctx context.Context, id int64, enabled bool, reason string) error
	// SetSkillScope changes who is offered a skill; ECONFLICT when
	// sharing would clash with another shared skill of the same name.
	SetSkillScope(ctx context.Context, id int64, scope string) error
	// RecordSkillRun counts a run; after maxFailures consecutive failures
	// (maxFailures > 0) the skill is disabled and disabled is true (once:
	// the run that disabled it).
	RecordSkillRun(ctx context.Context, id int64, ok bool, maxFailures int, at time.Time) (disabled bool, err error)
}

// SkillToolName is the tool name of a skill.
func SkillToolName(name string) string { return SkillToolPrefix + name }

// IsSkillTool reports whether a tool name is `skill` or a skill__ tool
// (all absent when features.self_update is false).
func IsSkillTool(name string) bool {
	return name == "skill" || strings.HasPrefix(name, SkillToolPrefix)
}

// ValidSkillName reports whether name may name a skill: a lower-case
// letter, then up to 39 lower-case letters, digits or underscores (no
// double underscore, so skill__<name> splits one way).
func ValidSkillName(name string) bool {
	if len(name) == 0 || len(name) > 40 || name[0] < 'a' || name[0] > 'z' || strings.Contains(name, "__") {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}
