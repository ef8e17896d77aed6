package kairos

import "slices"

// Policy is the operator's policy file (KAIROS_POLICY). Every section and key
// is optional; DefaultPolicy supplies what is missing. The policy package
// parses and validates it; ISO-8601 durations are kept as text here and
// parsed by the packages that use them.
type Policy struct {
	Clock     ClockPolicy     `yaml:"clock" json:"clock"`
	Access    AccessPolicy    `yaml:"access" json:"access"`
	Features  Features        `yaml:"features" json:"features"`
	Network   NetworkPolicy   `yaml:"network" json:"network"`
	Budgets   BudgetsPolicy   `yaml:"budgets" json:"budgets"`
	Agent     AgentPolicy     `yaml:"agent" json:"agent"`
	Sessions  SessionsPolicy  `yaml:"sessions" json:"sessions"`
	Approvals ApprovalsPolicy `yaml:"approvals" json:"approvals"`
	Media     MediaPolicy     `yaml:"media" json:"media"`
	Schedules SchedulesPolicy `yaml:"schedules" json:"schedules"`
	MCP       MCPPolicy       `yaml:"mcp" json:"mcp"`
	// Models describes models by name (models_policy.go); what is not
	// said comes from the built-in table of well-known models.
	Models   map[string]ModelSpec `yaml:"models" json:"models,omitempty"`
	Skills   SkillsPolicy         `yaml:"skills" json:"skills"`
	Research ResearchPolicy       `yaml:"research" json:"research"`
}

// ClockPolicy is exactly the `clock:` block of CLOCK.md §0.
type ClockPolicy struct {
	Enabled                 bool            `yaml:"enabled" json:"enabled"`
	Mode                    string          `yaml:"mode" json:"mode"` // off | light | normal
	CrossChannelTracking    bool            `yaml:"cross_channel_tracking" json:"cross_channel_tracking"`
	Store                   ClockStoreRules `yaml:"store" json:"store"`
	Checkins                CheckinsPolicy  `yaml:"checkins" json:"checkins"`
	Inference               InferencePolicy `yaml:"inference" json:"inference"`
	AmbiguityThresholdHours float64         `yaml:"ambiguity_threshold_hours" json:"ambiguity_threshold_hours"`
}

// ClockStoreRules is clock.store.
type ClockStoreRules struct {
	LastMessageTimestamps bool                `yaml:"last_message_timestamps" json:"last_message_timestamps"`
	LatestActions         LatestActionsPolicy `yaml:"latest_actions" json:"latest_actions"`
}

// LatestActionsPolicy is clock.store.latest_actions.
type LatestActionsPolicy struct {
	Enabled                              bool `yaml:"enabled" json:"enabled"`
	MaxItems                             int  `yaml:"max_items" json:"max_items"`
	AutoClockTemporalActions             bool `yaml:"auto_clock_temporal_actions" json:"auto_clock_temporal_actions"`
	RequireExplicitClockItForNonTemporal bool `yaml:"require_explicit_clock_it_for_non_temporal" json:"require_explicit_clock_it_for_non_temporal"`
	StoreQuotes                          bool `yaml:"store_quotes" json:"store_quotes"`
}

// CheckinsPolicy is clock.checkins.
type CheckinsPolicy struct {
	Enabled bool          `yaml:"enabled" json:"enabled"`
	Rules   []CheckinRule `yaml:"rules" json:"rules"`
}

// CheckinRule is one check-in rule, evaluated in order.
type CheckinRule struct {
	ID   string      `yaml:"id" json:"id"`
	When CheckinWhen `yaml:"when" json:"when"`
	Then CheckinThen `yaml:"then" json:"then"`
}

// CheckinWhen holds a rule's conditions; all given ones must hold.
type CheckinWhen struct {
	ThreadKind    string    `yaml:"thread_kind,omitempty" json:"thread_kind,omitempty"`
	ElapsedGTE    *Duration `yaml:"elapsed_gte,omitempty" json:"elapsed_gte,omitempty"`
	HasOpenAction *bool     `yaml:"has_open_action,omitempty" json:"has_open_action,omitempty"`
	// ElapsedAnyChannelGTE compares the user's last interaction on any channel.
	ElapsedAnyChannelGTE *Duration `yaml:"elapsed_any_channel_gte,omitempty" json:"elapsed_any_channel_gte,omitempty"`
}

// CheckinThen holds a rule's outcome.
type CheckinThen struct {
	AskForUpdates        bool `yaml:"ask_for_updates,omitempty" json:"ask_for_updates,omitempty"`
	AllowHedgedReference bool `yaml:"allow_hedged_reference,omitempty" json:"allow_hedged_reference,omitempty"`
	OfferRecap           bool `yaml:"offer_recap,omitempty" json:"offer_recap,omitempty"`
}

// InferencePolicy is clock.inference.
type InferencePolicy struct {
	Enabled                                bool `yaml:"enabled" json:"enabled"`
	AllowForToneOnly                       bool `yaml:"allow_for_tone_only" json:"allow_for_tone_only"`
	RequireConfirmationForImpactfulActions bool `yaml:"require_confirmation_for_impactful_actions" json:"require_confirmation_for_impactful_actions"`
}

// AccessPolicy says who may talk to the bot.
type AccessPolicy struct {
	Operators    []int64 `yaml:"operators" json:"operators"`
	AllowedUsers []int64 `yaml:"allowed_users" json:"allowed_users"`
	Pairing      bool    `yaml:"pairing" json:"pairing"`
	// GroupReplies: "mention" answers in groups only when mentioned or
	// replied to; "all" answers every message of an allowed user.
	GroupReplies string `yaml:"group_replies" json:"group_replies"`
}

// Features are seed 004's brain-level flags. A disabled feature is absent:
// its tools, actions and cell globals do not exist. Network: cells have no
// fetch/getJSON/postJSON/fetchWithAuth. CLIExec: no `code` tool, no
// watching cells, `kairos cell run` refuses. CredentialsAccess: cells have
// no getSecret/listSecrets and no secrets. SelfUpdate: no `skill` tool
// and no `skill__*` tools. UIAutomation and PeerSync have no surface in
// Kairos and must stay false.
type Features struct {
	Network           bool `yaml:"network" json:"network"`
	CLIExec           bool `yaml:"cli_exec" json:"cli_exec"`
	UIAutomation      bool `yaml:"ui_automation" json:"ui_automation"`
	CredentialsAccess bool `yaml:"credentials_access" json:"credentials_access"`
	SelfUpdate        bool `yaml:"self_update" json:"self_update"`
	PeerSync          bool `yaml:"peer_sync" json:"peer_sync"`
}

// NetworkPolicy governs the network of code cells (search is a host tool).
type NetworkPolicy struct {
	AllowList         []string `yaml:"allow_list" json:"allow_list"`                 // hosts or *.suffix
	BlockedCategories []string `yaml:"blocked_categories" json:"blocked_categories"` // always includes the built-in four
	Methods           []string `yaml:"methods" json:"methods"`                       // default [GET]
}

// CellBudget is a budget as written in the policy. Zero fields inherit.
type CellBudget struct {
	TimeBudgetMS    int    `yaml:"time_budget_ms,omitempty" json:"time_budget_ms,omitempty"`
	MaxToolCalls    int    `yaml:"max_tool_calls,omitempty" json:"max_tool_calls,omitempty"`
	MaxBytesRead    int64  `yaml:"max_bytes_read,omitempty" json:"max_bytes_read,omitempty"`
	MaxBytesWritten int64  `yaml:"max_bytes_written,omitempty" json:"max_bytes_written,omitempty"`
	MaxNetworkCalls int    `yaml:"max_network_calls,omitempty" json:"max_network_calls,omitempty"`
	MemoryLimitMB   int    `yaml:"memory_limit_mb,omitempty" json:"memory_limit_mb,omitempty"`
	MaxOutputBytes  int64  `yaml:"max_output_bytes,omitempty" json:"max_output_bytes,omitempty"`
	RiskTier        string `yaml:"risk_tier,omitempty" json:"risk_tier,omitempty"`
}

// BudgetsPolicy holds cell budgets: defaults, then per verb, then per risk
// tier (each later layer overrides the non-zero fields of the former).
type BudgetsPolicy struct {
	Defaults    CellBudget            `yaml:"defaults" json:"defaults"`
	PerVerb     map[string]CellBudget `yaml:"per_verb" json:"per_verb"`
	PerRiskTier map[string]CellBudget `yaml:"per_risk_tier" json:"per_risk_tier"`
	// Spend caps model use per user and for the whole bot
	// (policy_spend.go).
	Spend SpendPolicy `yaml:"spend" json:"spend"`
}

// AgentPolicy holds the LLM loop's limits and models.
type AgentPolicy struct {
	Model          string   `yaml:"model" json:"model"`                     // overrides KAIROS_MODEL when set
	FallbackModels []string `yaml:"fallback_models" json:"fallback_models"` // overrides KAIROS_FALLBACK_MODELS when set
	EmbeddingModel string   `yaml:"embedding_model" json:"embedding_model"` // empty: FTS5 only
	Persona        string   `yaml:"persona" json:"persona"`
	MaxSteps       int      `yaml:"max_steps" json:"max_steps"`             // model calls per turn
	MaxToolCalls   int      `yaml:"max_tool_calls" json:"max_tool_calls"`   // tool calls per turn
	MaxTurnTokens  int      `yaml:"max_turn_tokens" json:"max_turn_tokens"` // prompt+completion tokens per turn
	HistoryTokens  int      `yaml:"history_tokens" json:"history_tokens"`   // budget for the session history
	MaxReplyTokens int      `yaml:"max_reply_tokens" json:"max_reply_tokens"`
	ModeTimeout    Duration `yaml:"mode_timeout" json:"mode_timeout"` // idle threads fall back to DISCUSS
	Retries        int      `yaml:"retries" json:"retries"`           // per model, on 429/5xx/timeouts
	// ModelTimeout bounds one answer of the model, retries and fallback
	// models included: a hung endpoint costs the user this long, then one
	// message.
	ModelTimeout Duration `yaml:"model_timeout" json:"model_timeout"`
	// DisabledTools are absent from the model's tool list (search, code, memory).
	DisabledTools []string `yaml:"disabled_tools" json:"disabled_tools"`
}

// SessionsPolicy governs session division and retention.
type SessionsPolicy struct {
	AutoDivide              string   `yaml:"auto_divide" json:"auto_divide"`           // daily | weekly | none
	AutoDivideTime          string   `yaml:"auto_divide_time" json:"auto_divide_time"` // HH:MM in the user's Session TZ
	CodeExecutionsRetention Duration `yaml:"code_executions_retention" json:"code_executions_retention"`
	// How long finished bookkeeping rows are kept before the maintenance
	// job deletes them (issue 20); empty keeps them.
	ApprovalsRetention Duration `yaml:"approvals_retention" json:"approvals_retention"` // decided and continued approvals
	UpdatesRetention   Duration `yaml:"updates_retention" json:"updates_retention"`     // processed Telegram updates
	OutboxRetention    Duration `yaml:"outbox_retention" json:"outbox_retention"`       // reply parts sent
	FiringsRetention   Duration `yaml:"firings_retention" json:"firings_retention"`     // schedule firings sent, missed or failed
	// TokenUsageRetention is how long token usage stays per call; older
	// calls are rolled up into per-day totals (per user, thread, model).
	TokenUsageRetention Duration `yaml:"token_usage_retention" json:"token_usage_retention"`
	BackupSchedule      string   `yaml:"backup_schedule" json:"backup_schedule"` // cron spec, empty = no scheduled backup
}

// ApprovalsPolicy says which actions need a human's yes.
type ApprovalsPolicy struct {
	Required []string `yaml:"required" json:"required"` // action names, e.g. memory.forget
	Timeout  Duration `yaml:"timeout" json:"timeout"`   // expiry means deny
	// NeverGrant lists what can only be approved once: no "Allow 1h" or
	// "Always here" (grant.go). Entries are action names, tool names
	// (notes__add_note, skill__vat_price) or NeverGrantUnlistedHost.
	NeverGrant []string `yaml:"never_grant" json:"never_grant"`
}

// BuiltinTools are the names of the tools Kairos itself offers (beside
// MCP servers' and skills'): what agent.disabled_tools may name.
// TestBuiltinToolsAreTheRegistrys keeps it equal to the registry's.
var BuiltinTools = []string{"search", "code", "memory", "schedule", "skill", "research"}

// BuiltinBlockedCategories are refused whatever the policy says (seed 004).
var BuiltinBlockedCategories = []string{"banking", "payments", "crypto_exchanges", "login_flows"}

// DefaultPolicy returns the built-in policy: CLOCK.md §0 verbatim, seed
// 004's feature flags, and conservative limits.
func DefaultPolicy() *Policy {
	yes := true
	return &Policy{
		Clock: ClockPolicy{
			Enabled:              true,
			Mode:                 "light",
			CrossChannelTracking: true,
			Store: ClockStoreRules{
				LastMessageTimestamps: true,
				LatestActions: LatestActionsPolicy{
					Enabled:                              true,
					MaxItems:                             25,
					AutoClockTemporalActions:             true,
					RequireExplicitClockItForNonTemporal: true,
					StoreQuotes:                          false,
				},
			},
			Checkins: CheckinsPolicy{
				Enabled: true,
				Rules: []CheckinRule{
					{ID: "project_gap_1d", When: CheckinWhen{ThreadKind: "project", ElapsedGTE: durationPtr("P1D")}, Then: CheckinThen{AskForUpdates: true}},
					{ID: "action_gap_2h", When: CheckinWhen{HasOpenAction: &yes, ElapsedGTE: durationPtr("PT2H")}, Then: CheckinThen{AllowHedgedReference: true}},
					{ID: "long_gap_30d", When: CheckinWhen{ElapsedGTE: durationPtr("P30D")}, Then: CheckinThen{OfferRecap: true}},
				},
			},
			Inference: InferencePolicy{
				Enabled:                                true,
				AllowForToneOnly:                       true,
				RequireConfirmationForImpactfulActions: true,
			},
			AmbiguityThresholdHours: 4,
		},
		Access: AccessPolicy{Pairing: true, GroupReplies: "mention"},
		Features: Features{
			Network:           false,
			CLIExec:           true,
			UIAutomation:      false,
			CredentialsAccess: false,
			SelfUpdate:        true,
			PeerSync:          false,
		},
		Network: NetworkPolicy{
			BlockedCategories: append([]string(nil), BuiltinBlockedCategories...),
			Methods:           []string{"GET"},
		},
		Budgets: BudgetsPolicy{
			Defaults: DefaultBudget().PolicyBudget(),
		},
		Agent: AgentPolicy{
			MaxSteps:       8,
			MaxToolCalls:   16,
			MaxTurnTokens:  60000,
			HistoryTokens:  6000,
			MaxReplyTokens: 1500,
			ModeTimeout:    MustDuration("PT30M"),
			Retries:        2,
			ModelTimeout:   MustDuration("PT2M"),
		},
		Sessions: SessionsPolicy{
			AutoDivide:              "daily",
			AutoDivideTime:          "00:00",
			CodeExecutionsRetention: MustDuration("P30D"),
			ApprovalsRetention:      MustDuration("P30D"),
			UpdatesRetention:        MustDuration("P7D"),
			OutboxRetention:         MustDuration("P7D"),
			FiringsRetention:        MustDuration("P30D"),
			TokenUsageRetention:     MustDuration("P400D"),
		},
		Approvals: ApprovalsPolicy{
			Required:   []string{ActionMemoryForget, ActionCodeNetworkWrite, ActionCodeSecrets, ActionMCPWrite},
			Timeout:    MustDuration("PT10M"),
			NeverGrant: []string{ActionSkillCreate, ActionSkillUpdate, ActionSkillRollback, NeverGrantUnlistedHost},
		},
		Media:     DefaultMediaPolicy(),
		Schedules: DefaultSchedulesPolicy(),
		MCP:       DefaultMCPPolicy(),
		Skills:    DefaultSkillsPolicy(),
		Research:  DefaultResearchPolicy(),
	}
}

// IsOperator reports whether the Telegram user id is an operator.
func (p *Policy) IsOperator(id int64) bool { return slices.Contains(p.Access.Operators, id) }

// IsAllowed reports whether the user may reach the agent.
func (p *Policy) IsAllowed(id int64) bool {
	return p.IsOperator(id) || slices.Contains(p.Access.AllowedUsers, id)
}
