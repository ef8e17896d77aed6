package policy

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/kairos-agent/kairos"
)

// Allowed values of the enumerated keys.
var (
	ClockModes      = []string{"off", "light", "normal"}                                   // clock.mode
	ThreadKinds     = []string{"project", "conversation", "scheduling", "operations"}      // CLOCK.md §5.2
	GroupReplyModes = []string{"mention", "all"}                                           // access.group_replies
	AutoDivideModes = []string{"daily", "weekly", "none"}                                  // sessions.auto_divide
	RiskTiers       = []string{"low", "medium", "high"}                                    // budgets
	HTTPMethods     = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} // network.methods
)

// KnownActions are the action names approvals.required may list: the
// tools' actions (kairos.ToolAction.Name) and capabilities. A name that is
// not here is refused, because a misspelt name would silently require no
// approval. Packages that add actions append to it at init.
var KnownActions = slices.Clone(kairos.Actions)

// Validate checks a policy built in code (Parse and Load already call it).
// It returns Errors without positions, each message prefixed with the
// key's path ("clock.mode: …"), or nil.
func Validate(p *kairos.Policy) error {
	if p == nil {
		return Errors{{Msg: "policy: nil"}}
	}
	fes := validate(p)
	if len(fes) == 0 {
		return nil
	}
	errs := make(Errors, len(fes))
	for i, fe := range fes {
		errs[i] = PosError{Msg: fe.String()}
	}
	return errs
}

type fieldErr struct {
	path string
	key  bool // the problem is the key itself (map keys)
	msg  string
}

func (fe fieldErr) String() string { return fe.path + ": " + fe.msg }

type checker struct{ errs []fieldErr }

func (c *checker) add(path, format string, args ...any) {
	c.errs = append(c.errs, fieldErr{path: path, msg: fmt.Sprintf(format, args...)})
}

func (c *checker) addKey(path, format string, args ...any) {
	c.errs = append(c.errs, fieldErr{path: path, key: true, msg: fmt.Sprintf(format, args...)})
}

func (c *checker) enum(path, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		c.add(path, "%q is not one of %s%s", v, strings.Join(allowed, ", "), didYouMean(v, allowed))
	}
}

func (c *checker) min(path string, v, lo int64) {
	switch {
	case v < 0 && lo == 0:
		c.add(path, "must not be negative, got %d", v)
	case v < lo:
		c.add(path, "must be at least %d, got %d", lo, v)
	}
}

// dur checks a decoded duration; positive demands more than zero.
func (c *checker) dur(path string, d kairos.Duration, positive bool) {
	if positive && d.Approx() <= 0 {
		c.add(path, "must be longer than zero")
	}
}

var (
	hhmm       = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	hostRe     = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
	categoryRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)
)

func validate(p *kairos.Policy) []fieldErr {
	c := &checker{}
	validateClock(c, &p.Clock)
	validateAccess(c, &p.Access, &p.Features)
	validateNetwork(c, &p.Network)
	validateBudgets(c, &p.Budgets)
	validateAgent(c, &p.Agent)
	validateSessions(c, &p.Sessions)
	validateApprovals(c, &p.Approvals)
	validateMedia(c, &p.Media)
	validateSchedules(c, &p.Schedules)
	validateSkills(c, &p.Skills)
	validateResearch(c, &p.Research)
	validateMCP(c, &p.MCP)
	validateModels(c, p.Models)
	validateSpend(c, &p.Budgets.Spend)
	return c.errs
}

// validateAccess checks access (user ids, group replies) and the feature
// flags Kairos cannot honour.
func validateAccess(c *checker, ap *kairos.AccessPolicy, fp *kairos.Features) {
	for i, id := range ap.Operators {
		if id <= 0 {
			c.add(fmt.Sprintf("access.operators[%d]", i), "a Telegram user id is a positive number, got %d", id)
		}
	}
	for i, id := range ap.AllowedUsers {
		if id <= 0 {
			c.add(fmt.Sprintf("access.allowed_users[%d]", i), "a Telegram user id is a positive number, got %d", id)
		}
	}
	c.enum("access.group_replies", ap.GroupReplies, GroupReplyModes)
	if fp.UIAutomation {
		c.add("features.ui_automation", "Kairos has no UI automation; this flag can only be false")
	}
	if fp.PeerSync {
		c.add("features.peer_sync", "Kairos has no peer sync; this flag can only be false")
	}
}

// validateNetwork checks the cells' network rules: hosts, categories,
// methods.
func validateNetwork(c *checker, np *kairos.NetworkPolicy) {
	c.hosts("network.allow_list", np.AllowList)
	for i, cat := range np.BlockedCategories {
		if !categoryRe.MatchString(cat) {
			c.add(fmt.Sprintf("network.blocked_categories[%d]", i), "%q: a category is lower-case letters, digits and _", cat)
		}
	}
	for i, m := range np.Methods {
		path := fmt.Sprintf("network.methods[%d]", i)
		if !slices.Contains(HTTPMethods, m) {
			if slices.Contains(HTTPMethods, strings.ToUpper(m)) {
				c.add(path, "%q: HTTP methods are upper-case, write %q", m, strings.ToUpper(m))
			} else {
				c.add(path, "%q is not one of %s", m, strings.Join(HTTPMethods, ", "))
			}
		}
	}
}

// hosts checks an allow list: host names or *.suffix, never URLs.
func (c *checker) hosts(key string, list []string) {
	for i, h := range list {
		path := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case strings.Contains(h, "/"):
			c.add(path, "%q: write a host name (example.org) or *.suffix, not a URL", h)
		case !hostRe.MatchString(strings.ToLower(h)):
			c.add(path, "%q is not a host name or *.suffix", h)
		}
	}
}

// validateBudgets checks the cells' budgets: defaults, per verb, per
// risk tier.
func validateBudgets(c *checker, bp *kairos.BudgetsPolicy) {
	validateBudget(c, "budgets.defaults", bp.Defaults, true)
	for _, verb := range sortedKeys(bp.PerVerb) {
		path := "budgets.per_verb." + verb
		if !slices.Contains(kairos.Verbs, verb) {
			c.addKey(path, "%q is not a task verb (%s)%s", verb, strings.Join(kairos.Verbs, ", "), didYouMean(verb, kairos.Verbs))
		}
		validateBudget(c, path, bp.PerVerb[verb], false)
	}
	for _, tier := range sortedKeys(bp.PerRiskTier) {
		path := "budgets.per_risk_tier." + tier
		if !slices.Contains(RiskTiers, tier) {
			c.addKey(path, "%q is not a risk tier (%s)%s", tier, strings.Join(RiskTiers, ", "), didYouMean(tier, RiskTiers))
		}
		validateBudget(c, path, bp.PerRiskTier[tier], false)
	}
}

// validateAgent checks the agent loop's limits and timeouts.
func validateAgent(c *checker, a *kairos.AgentPolicy) {
	for i, m := range a.FallbackModels {
		if strings.TrimSpace(m) == "" {
			c.add(fmt.Sprintf("agent.fallback_models[%d]", i), "empty model name")
		}
	}
	c.min("agent.max_steps", int64(a.MaxSteps), 1)
	c.min("agent.max_tool_calls", int64(a.MaxToolCalls), 0)
	c.min("agent.max_turn_tokens", int64(a.MaxTurnTokens), 0)
	c.min("agent.history_tokens", int64(a.HistoryTokens), 0)
	c.min("agent.max_reply_tokens", int64(a.MaxReplyTokens), 0)
	c.min("agent.retries", int64(a.Retries), 0)
	if a.Retries > 10 {
		c.add("agent.retries", "must be at most 10, got %d", a.Retries)
	}
	c.dur("agent.mode_timeout", a.ModeTimeout, true)
	c.dur("agent.model_timeout", a.ModelTimeout, true)
	for i, t := range a.DisabledTools {
		c.enum(fmt.Sprintf("agent.disabled_tools[%d]", i), t, kairos.BuiltinTools)
	}
}

// validateSessions checks session division, retentions and backups.
func validateSessions(c *checker, s *kairos.SessionsPolicy) {
	c.enum("sessions.auto_divide", s.AutoDivide, AutoDivideModes)
	if !hhmm.MatchString(s.AutoDivideTime) {
		c.add("sessions.auto_divide_time", "%q is not a time of day HH:MM (00:00 to 23:59)", s.AutoDivideTime)
	}
	c.dur("sessions.code_executions_retention", s.CodeExecutionsRetention, true)
	c.dur("sessions.approvals_retention", s.ApprovalsRetention, true)
	c.dur("sessions.updates_retention", s.UpdatesRetention, true)
	c.dur("sessions.outbox_retention", s.OutboxRetention, true)
	c.dur("sessions.firings_retention", s.FiringsRetention, true)
	c.dur("sessions.token_usage_retention", s.TokenUsageRetention, true)
	if s.BackupSchedule != "" {
		if _, err := cron.ParseStandard(s.BackupSchedule); err != nil {
			c.add("sessions.backup_schedule", "%q is not a cron schedule (5 fields or @daily): %v", s.BackupSchedule, err)
		}
	}
}

// validateApprovals checks the actions that need approval and its timeout.
func validateApprovals(c *checker, ap *kairos.ApprovalsPolicy) {
	for i, name := range ap.Required {
		if !slices.Contains(KnownActions, name) {
			c.add(fmt.Sprintf("approvals.required[%d]", i), "%q is not a known action (%s)%s", name, strings.Join(KnownActions, ", "), didYouMean(name, KnownActions))
		}
	}
	c.dur("approvals.timeout", ap.Timeout, true)
	for i, name := range ap.NeverGrant {
		if !neverGrantable(name) {
			c.add(fmt.Sprintf("approvals.never_grant[%d]", i), "%q is not an action (%s), %s, or a tool named server__tool or skill__name%s",
				name, strings.Join(KnownActions, ", "), kairos.NeverGrantUnlistedHost, didYouMean(name, append(slices.Clone(KnownActions), kairos.NeverGrantUnlistedHost)))
		}
	}
}

// neverGrantable reports whether approvals.never_grant may list name: an
// action, the unlisted-host condition, or a tool named <server>__<tool>
// (an MCP server's, or skill__<name>).
func neverGrantable(name string) bool {
	if slices.Contains(KnownActions, name) || name == kairos.NeverGrantUnlistedHost {
		return true
	}
	server, tool, ok := strings.Cut(name, kairos.MCPToolSep)
	return ok && server != "" && tool != "" && !strings.ContainsAny(name, " \t\n")
}

func validateClock(c *checker, cp *kairos.ClockPolicy) {
	c.enum("clock.mode", cp.Mode, ClockModes)
	c.min("clock.store.latest_actions.max_items", int64(cp.Store.LatestActions.MaxItems), 1)
	if h := cp.AmbiguityThresholdHours; math.IsNaN(h) || math.IsInf(h, 0) || h < 0 {
		c.add("clock.ambiguity_threshold_hours", "must be a number of hours ≥ 0, got %v", h)
	}
	first := map[string]int{}
	for i, r := range cp.Checkins.Rules {
		path := fmt.Sprintf("clock.checkins.rules[%d]", i)
		switch {
		case strings.TrimSpace(r.ID) == "":
			c.add(path, "a rule needs an id")
		default:
			if j, dup := first[r.ID]; dup {
				c.add(path+".id", "duplicate rule id %q (also rules[%d])", r.ID, j)
			} else {
				first[r.ID] = i
			}
		}
		if r.When.ThreadKind != "" {
			c.enum(path+".when.thread_kind", r.When.ThreadKind, ThreadKinds)
		}
		if t := r.Then; !t.AskForUpdates && !t.AllowHedgedReference && !t.OfferRecap {
			c.add(path+".then", "the rule does nothing: set ask_for_updates, allow_hedged_reference or offer_recap to true")
		}
	}
}

// validateBudget checks one budget layer. The defaults layer is the floor
// that the others inherit from, so its time, memory and output limits and
// its risk tier must be set.
func validateBudget(c *checker, path string, b kairos.CellBudget, isDefaults bool) {
	c.min(path+".time_budget_ms", int64(b.TimeBudgetMS), 0)
	c.min(path+".max_tool_calls", int64(b.MaxToolCalls), 0)
	c.min(path+".max_bytes_read", b.MaxBytesRead, 0)
	c.min(path+".max_bytes_written", b.MaxBytesWritten, 0)
	c.min(path+".max_network_calls", int64(b.MaxNetworkCalls), 0)
	c.min(path+".memory_limit_mb", int64(b.MemoryLimitMB), 0)
	c.min(path+".max_output_bytes", b.MaxOutputBytes, 0)
	if b.RiskTier != "" {
		c.enum(path+".risk_tier", b.RiskTier, RiskTiers)
	}
	if isDefaults {
		if b.TimeBudgetMS == 0 {
			c.add(path+".time_budget_ms", "the defaults need a time budget above 0")
		}
		if b.MemoryLimitMB == 0 {
			c.add(path+".memory_limit_mb", "the defaults need a memory limit above 0")
		}
		if b.MaxOutputBytes == 0 {
			c.add(path+".max_output_bytes", "the defaults need an output limit above 0")
		}
		if b.RiskTier == "" {
			c.add(path+".risk_tier", "the defaults need a risk tier (%s)", strings.Join(RiskTiers, ", "))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
