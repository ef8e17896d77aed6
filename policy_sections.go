package kairos

import (
	"slices"
	"strings"
	"time"
)

// MCP transports (mcp.servers.<name>.transport).
const (
	MCPStdio = "stdio" // a command Kairos starts, speaking JSON-RPC on stdin/stdout
	MCPHTTP  = "http"  // a streamable HTTP endpoint
)

// Impacts of an MCP tool (mcp.servers.<name>.impact).
const (
	ImpactRead  = "read"  // looks things up: offered like search
	ImpactWrite = "write" // changes something: impactful, approved like memory.forget
)

// MCPToolSep joins a server's name and its tool's name into the name the
// model sees: "notes__search".
const MCPToolSep = "__"

// MCPPolicy is the policy's `mcp` section: the Model Context Protocol
// servers whose tools the model may use. No server is listed by default.
type MCPPolicy struct {
	// MaxTools caps how many MCP tools are offered at once, over all
	// servers (by server name, then tool name); 0 offers none.
	MaxTools int `yaml:"max_tools" json:"max_tools"`
	// CallTimeout (ISO-8601 duration) bounds one tool call; a server that
	// has not answered by then costs the model one error.
	CallTimeout Duration `yaml:"call_timeout" json:"call_timeout"`
	// Servers by name; the name prefixes their tools (<name>__<tool>).
	Servers map[string]MCPServer `yaml:"servers" json:"servers"`
}

// MCPServer is one server of the mcp section.
type MCPServer struct {
	// Disabled keeps the server listed but not connected: its tools are
	// absent.
	Disabled bool `yaml:"disabled" json:"disabled"`
	// Transport is MCPStdio or MCPHTTP; empty means stdio when Command is
	// set and http when URL is.
	Transport string `yaml:"transport" json:"transport"`
	// Command and Args start a stdio server. It gets a clean environment
	// (PATH, HOME, LANG, TMPDIR) plus Env and SecretEnv, never Kairos's own
	// variables.
	Command string            `yaml:"command" json:"command"`
	Args    []string          `yaml:"args" json:"args"`
	Env     map[string]string `yaml:"env" json:"env"`
	// SecretEnv sets environment variables of a stdio server from secrets:
	// VARIABLE → NAME of KAIROS_SECRET_<NAME>.
	SecretEnv map[string]string `yaml:"secret_env" json:"secret_env"`
	// URL is a streamable HTTP server's endpoint.
	URL string `yaml:"url" json:"url"`
	// TokenSecret names the secret (KAIROS_SECRET_<NAME>) sent as a bearer
	// token to an HTTP server.
	TokenSecret string `yaml:"token_secret" json:"token_secret"`
	// Tools is the allow-list of the server's tools; none by default,
	// ["*"] for all.
	Tools []string `yaml:"tools" json:"tools"`
	// Impact says per tool whether it reads or writes; a tool not listed
	// is a write tool.
	Impact map[string]string `yaml:"impact" json:"impact"`
	// CallTimeout overrides mcp.call_timeout for this server.
	CallTimeout Duration `yaml:"call_timeout" json:"call_timeout"`
}

// MCP defaults.
const (
	DefaultMCPMaxTools    = 32
	DefaultMCPCallTimeout = "PT30S"
)

// DefaultMCPPolicy returns the built-in mcp section: no servers.
func DefaultMCPPolicy() MCPPolicy {
	return MCPPolicy{MaxTools: DefaultMCPMaxTools, CallTimeout: MustDuration(DefaultMCPCallTimeout)}
}

// TransportKind is the server's transport, inferred when not written.
func (s MCPServer) TransportKind() string {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.URL != "" && s.Command == "":
		return MCPHTTP
	}
	return MCPStdio
}

// Allows reports whether the allow-list lets the model see the tool.
func (s MCPServer) Allows(tool string) bool {
	return slices.Contains(s.Tools, "*") || slices.Contains(s.Tools, tool)
}

// ImpactOf is the tool's impact: what the policy says, else write.
func (s MCPServer) ImpactOf(tool string) string {
	if s.Impact[tool] == ImpactRead {
		return ImpactRead
	}
	return ImpactWrite
}

// MCPToolName is the name the model sees for a server's tool.
func MCPToolName(server, tool string) string { return server + MCPToolSep + tool }

// SplitMCPToolName splits "<server>__<tool>"; ok is false for other names.
func SplitMCPToolName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, MCPToolSep)
	return server, tool, ok && server != "" && tool != ""
}

// MediaPolicy is the policy's `media` section: voice notes, photos and
// documents.
type MediaPolicy struct {
	// Enabled offers media at all; when false, files are answered with one
	// sentence saying only text is read, and nothing about media is in the
	// prompt or the command menu.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Vision says the chat model reads images. KAIROS_VISION_MODEL turns
	// vision on with that model whatever this says.
	Vision bool `yaml:"vision" json:"vision"`
	// MaxImageSide is the longest side, in pixels, an image is scaled down
	// to before it reaches the model.
	MaxImageSide int `yaml:"max_image_side" json:"max_image_side"`
	// MaxDocumentBytes is the most extracted text a document may have;
	// a larger one is refused with a message saying so.
	MaxDocumentBytes int `yaml:"max_document_bytes" json:"max_document_bytes"`
	// ShowTranscript quotes what was heard above the answer to a voice note.
	ShowTranscript bool `yaml:"show_transcript" json:"show_transcript"`
	// VoiceReplies lets users turn on spoken answers with /voice on.
	VoiceReplies bool `yaml:"voice_replies" json:"voice_replies"`
	// StoreImages keeps the scaled images under KAIROS_DATA_DIR/media
	// (named by their SHA-256) and notes the file in the session; by
	// default images live for the turn only.
	StoreImages bool `yaml:"store_images" json:"store_images"`
	// MaxParallelFiles is how many images and documents are downloaded and
	// decoded at once across all chats; more wait their turn (each may
	// take up to 20 MB downloaded and 160 MB decoded).
	MaxParallelFiles int `yaml:"max_parallel_files" json:"max_parallel_files"`
}

// Media defaults.
const (
	DefaultMaxImageSide     = 1568
	DefaultMaxDocumentBytes = 256 << 10
	DefaultMaxParallelFiles = 2
)

// DefaultMediaPolicy returns the built-in media section.
func DefaultMediaPolicy() MediaPolicy {
	return MediaPolicy{
		Enabled:          true,
		Vision:           false,
		MaxImageSide:     DefaultMaxImageSide,
		MaxDocumentBytes: DefaultMaxDocumentBytes,
		ShowTranscript:   true,
		VoiceReplies:     true,
		MaxParallelFiles: DefaultMaxParallelFiles,
	}
}

// Travel settings of the schedules section: what a recurring schedule
// does when its user's zone changes after it was created.
const (
	// TravelKeepZone keeps the zone the schedule was created in: "08:00
	// Europe/Berlin" stays 08:00 Berlin time wherever the user is.
	TravelKeepZone = "keep_zone"
	// TravelFollowUser keeps the wall-clock time in the user's new zone:
	// "08:00" becomes 08:00 where the user now is.
	TravelFollowUser = "follow_user"
)

// SchedulesPolicy is the policy's `schedules` section: reminders, tasks
// and watching cells (the `schedule` tool).
type SchedulesPolicy struct {
	// Enabled offers the schedule tool, /reminders and the runner; when
	// false the tool is absent from the tool list.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// MaxPerUser is the most active schedules one user may have.
	MaxPerUser int `yaml:"max_per_user" json:"max_per_user"`
	// MinInterval (ISO-8601 duration) is the shortest repeat of a
	// recurring task or watching cell unless the kind's own key says
	// otherwise. Every gap over a full cycle of the rule counts, not only
	// the first.
	MinInterval Duration `yaml:"min_interval" json:"min_interval"`
	// ReminderMinInterval, TaskMinInterval and CellMinInterval are the
	// shortest repeat of each kind; a zero task or cell value takes
	// MinInterval.
	ReminderMinInterval Duration `yaml:"reminder_min_interval" json:"reminder_min_interval"`
	TaskMinInterval     Duration `yaml:"task_min_interval" json:"task_min_interval"`
	CellMinInterval     Duration `yaml:"cell_min_interval" json:"cell_min_interval"`
	// LateThreshold (ISO-8601 duration): a firing found later than this
	// after its time (downtime) is reported as missed instead of sent.
	LateThreshold Duration `yaml:"late_threshold" json:"late_threshold"`
	// TasksMayUseTools lets a task's agent turn call tools (search,
	// memory, code); false answers from the model alone.
	TasksMayUseTools bool `yaml:"tasks_may_use_tools" json:"tasks_may_use_tools"`
	// Travel is TravelKeepZone or TravelFollowUser.
	Travel string `yaml:"travel" json:"travel"`
	// DefaultTime ("HH:MM") is the time of day a schedule given a day
	// but no time gets ("friday"), stated in its approval; empty: the
	// schedule tool asks for the time. A day alone never fires at
	// midnight.
	DefaultTime string `yaml:"default_time" json:"default_time"`
}

// DefaultTimeOfDay is DefaultTime's hour and minute; ok is false when it
// is empty or not HH:MM.
func (s SchedulesPolicy) DefaultTimeOfDay() (hour, minute int, ok bool) {
	t, err := time.Parse("15:04", s.DefaultTime)
	if err != nil || len(s.DefaultTime) != 5 {
		return 0, 0, false
	}
	return t.Hour(), t.Minute(), true
}

// Schedules defaults.
const (
	DefaultMaxSchedulesPerUser = 50
	DefaultScheduleMinInterval = "PT1H"
	DefaultReminderMinInterval = "PT1M"
	DefaultLateThreshold       = "PT12H"
)

// DefaultSchedulesPolicy returns the built-in schedules section.
func DefaultSchedulesPolicy() SchedulesPolicy {
	return SchedulesPolicy{Enabled: true, MaxPerUser: DefaultMaxSchedulesPerUser, MinInterval: MustDuration(DefaultScheduleMinInterval),
		ReminderMinInterval: MustDuration(DefaultReminderMinInterval),
		LateThreshold:       MustDuration(DefaultLateThreshold), TasksMayUseTools: true, Travel: TravelKeepZone}
}

// MinIntervalFor is the shortest repeat allowed for a schedule kind.
func (s SchedulesPolicy) MinIntervalFor(kind string) Duration {
	switch kind {
	case ScheduleReminder:
		return s.ReminderMinInterval
	case ScheduleTask:
		if s.TaskMinInterval.Approx() > 0 {
			return s.TaskMinInterval
		}
	case ScheduleCell:
		if s.CellMinInterval.Approx() > 0 {
			return s.CellMinInterval
		}
	}
	return s.MinInterval
}

// SkillsPolicy is the policy's `skills` section: limits of the skills
// Kairos builds for itself (the `skill` tool and the skill__<name> tools).
// features.self_update: false removes all of it.
type SkillsPolicy struct {
	// VersionsKept is how many versions of a skill are kept for rollback
	// (the current one included).
	VersionsKept int `yaml:"versions_kept" json:"versions_kept"`
	// MaxFailures is how many runs in a row may fail before the skill is
	// disabled and its owner told.
	MaxFailures int `yaml:"max_failures" json:"max_failures"`
	// MaxOffered is the most skill__ tools offered in one prompt; past it
	// the most relevant ones to the message are offered, and `skill`
	// list/show finds the others.
	MaxOffered int `yaml:"max_offered" json:"max_offered"`
	// MaxPerUser is the most skills one user may own.
	MaxPerUser int `yaml:"max_per_user" json:"max_per_user"`
	// MaxTests is the most tests a skill may carry.
	MaxTests int `yaml:"max_tests" json:"max_tests"`
}

// Skills defaults.
const (
	DefaultSkillVersionsKept = 5
	DefaultSkillMaxFailures  = 3
	DefaultSkillMaxOffered   = 8
	DefaultSkillMaxPerUser   = 50
	DefaultSkillMaxTests     = 20
)

// DefaultSkillsPolicy returns the built-in skills section.
func DefaultSkillsPolicy() SkillsPolicy {
	return SkillsPolicy{VersionsKept: DefaultSkillVersionsKept, MaxFailures: DefaultSkillMaxFailures,
		MaxOffered: DefaultSkillMaxOffered, MaxPerUser: DefaultSkillMaxPerUser, MaxTests: DefaultSkillMaxTests}
}

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
