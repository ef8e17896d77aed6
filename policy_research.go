package kairos

import "slices"

// ResearchPolicy is the policy's `research` section: seed 004's tiered
// research (the `research` tool and /research). Enabled false removes
// both.
type ResearchPolicy struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Tiers are the tiers research may use; they are always tried lowest
	// first (ResearchTiers order), whatever order they are written in.
	Tiers   []string              `yaml:"tiers" json:"tiers"`
	Offline ResearchOfflinePolicy `yaml:"offline" json:"offline"`
	Web     ResearchWebPolicy     `yaml:"web" json:"web"`
	// Model is the external model of tier 4; empty: the chat model.
	Model string `yaml:"model" json:"model,omitempty"`
	// StaleAfter is the age past which a source counts as stale (lower
	// confidence; a fresher source that disagrees wins).
	StaleAfter Duration `yaml:"stale_after" json:"stale_after"`
	// Resume is how long a trace cut short (a restart, a failure) may be
	// resumed by the same question before it starts afresh.
	Resume  Duration              `yaml:"resume" json:"resume"`
	Budgets ResearchBudgetsPolicy `yaml:"budgets" json:"budgets"`
}

// ResearchOfflinePolicy is research.offline: the operator's references.
type ResearchOfflinePolicy struct {
	// Dir is a folder of Markdown, HTML, text and PDF documents, indexed
	// for full-text search; empty: none.
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// KiwixURL is a kiwix-serve base URL serving ZIM archives; empty: none.
	KiwixURL string `yaml:"kiwix_url" json:"kiwix_url,omitempty"`
	// MaxFileBytes bounds a document read from Dir.
	MaxFileBytes int64 `yaml:"max_file_bytes" json:"max_file_bytes"`
}

// ResearchWebPolicy is research.web.
type ResearchWebPolicy struct {
	// AllowList holds the domains (host or *.suffix) the web tier may
	// read; empty: the web tier is off.
	AllowList []string `yaml:"allow_list" json:"allow_list"`
	// MaxPageBytes bounds a fetched page.
	MaxPageBytes int64 `yaml:"max_page_bytes" json:"max_page_bytes"`
}

// ResearchBudgetsPolicy holds one budget per depth of the research tool.
type ResearchBudgetsPolicy struct {
	Quick  ResearchBudget `yaml:"quick" json:"quick"`
	Normal ResearchBudget `yaml:"normal" json:"normal"`
	Deep   ResearchBudget `yaml:"deep" json:"deep"`
}

// ResearchBudget bounds one research question.
type ResearchBudget struct {
	// Rounds is the most reading rounds (one Researcher call each).
	Rounds int `yaml:"rounds" json:"rounds"`
	// ToolCalls is the most retrievals: memory recalls, index and ZIM
	// searches, web searches and page fetches.
	ToolCalls int `yaml:"tool_calls" json:"tool_calls"`
	// Tokens bounds the model tokens (prompt and answer) of each stage.
	Tokens ResearchTokens `yaml:"tokens" json:"tokens"`
	// WallTime bounds the time spent, across resumes.
	WallTime Duration `yaml:"wall_time" json:"wall_time"`
}

// ResearchTokens are token budgets per stage.
type ResearchTokens struct {
	Planner    int `yaml:"planner" json:"planner"`
	Researcher int `yaml:"researcher" json:"researcher"`
	Verifier   int `yaml:"verifier" json:"verifier"`
	Model      int `yaml:"model" json:"model"` // the external model of tier 4
}

// Research depths (the tool's depth argument).
const (
	DepthQuick  = "quick"
	DepthNormal = "normal"
	DepthDeep   = "deep"
)

// Budget returns the budget of a depth (normal for an unknown one).
func (b ResearchBudgetsPolicy) Budget(depth string) ResearchBudget {
	switch depth {
	case DepthQuick:
		return b.Quick
	case DepthDeep:
		return b.Deep
	}
	return b.Normal
}

// UsesTier reports whether the tier is on.
func (r ResearchPolicy) UsesTier(tier string) bool { return slices.Contains(r.Tiers, tier) }

// DefaultResearchPolicy returns the built-in research section: every tier
// on, but nothing offline and no web until the operator names a folder, a
// kiwix-serve or allowed domains.
func DefaultResearchPolicy() ResearchPolicy {
	return ResearchPolicy{
		Enabled:    true,
		Tiers:      slices.Clone(ResearchTiers),
		Offline:    ResearchOfflinePolicy{MaxFileBytes: 4 << 20},
		Web:        ResearchWebPolicy{MaxPageBytes: 2 << 20},
		StaleAfter: MustDuration("P2Y"),
		Resume:     MustDuration("P1D"),
		Budgets: ResearchBudgetsPolicy{
			Quick: ResearchBudget{Rounds: 2, ToolCalls: 6, WallTime: MustDuration("PT45S"),
				Tokens: ResearchTokens{Planner: 2000, Researcher: 12000, Verifier: 3000, Model: 2000}},
			Normal: ResearchBudget{Rounds: 5, ToolCalls: 16, WallTime: MustDuration("PT3M"),
				Tokens: ResearchTokens{Planner: 4000, Researcher: 40000, Verifier: 8000, Model: 4000}},
			Deep: ResearchBudget{Rounds: 10, ToolCalls: 40, WallTime: MustDuration("PT10M"),
				Tokens: ResearchTokens{Planner: 8000, Researcher: 100000, Verifier: 16000, Model: 8000}},
		},
	}
}
