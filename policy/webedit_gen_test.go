package policy_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

// genPolicy is a random policy, the same one for the same seed: calling
// it twice gives two policies that share nothing, the policy in force
// and the one a web edit proposes.
func genPolicy(seed uint64) *kairos.Policy {
	r := rand.New(rand.NewPCG(seed, 7))
	p := kairos.DefaultPolicy()
	genAccess(r, p)
	genNetwork(r, p)
	genMCP(r, p)
	genBudgets(r, p)
	genSpend(r, p)
	genModels(r, p)
	return p
}

func coin(r *rand.Rand) bool { return r.IntN(2) == 0 }

// some is a random subset of xs, in order.
func some[T any](r *rand.Rand, xs []T) []T {
	var out []T
	for _, x := range xs {
		if coin(r) {
			out = append(out, x)
		}
	}
	return out
}

func genAccess(r *rand.Rand, p *kairos.Policy) {
	p.Access.Operators = some(r, []int64{1001, 1002, 1003})
	p.Access.AllowedUsers = some(r, []int64{2001, 2002, 2003, 2004})
	p.Access.Pairing = coin(r)
	p.Access.GroupReplies = []string{"mention", "all"}[r.IntN(2)]
	p.Features = kairos.Features{Network: coin(r), CLIExec: coin(r), CredentialsAccess: coin(r), SelfUpdate: coin(r)}
	p.Schedules.Enabled, p.Schedules.TasksMayUseTools = coin(r), coin(r)
	p.Agent.DisabledTools = some(r, []string{"search", "code", "memory", "schedule"})
	p.Approvals.Required = some(r, kairos.Actions)
	p.Approvals.Timeout = kairos.Duration{Minutes: float64(1 + r.IntN(60))}
	p.Clock.Inference.RequireConfirmationForImpactfulActions = coin(r)
}

func genNetwork(r *rand.Rand, p *kairos.Policy) {
	p.Network.AllowList = some(r, []string{"api.example.com", "*.example.org", "*.sub.example.net", "example.net", "weather.test"})
	p.Network.Methods = some(r, policy.HTTPMethods)
	p.Network.BlockedCategories = append(slices.Clone(kairos.BuiltinBlockedCategories), some(r, []string{"gambling", "adult", "*.ads.test"})...)
}

func genMCP(r *rand.Rand, p *kairos.Policy) {
	p.MCP.Servers = map[string]kairos.MCPServer{}
	for _, name := range some(r, []string{"files", "home", "notes"}) {
		p.MCP.Servers[name] = genServer(r, name)
	}
}

func genServer(r *rand.Rand, name string) kairos.MCPServer {
	s := kairos.MCPServer{Disabled: coin(r), Tools: some(r, []string{"a", "b", "c"}), Impact: map[string]string{}}
	if coin(r) {
		s.Command, s.Args = "/usr/local/bin/mcp-"+name, some(r, []string{"--stdio", "--verbose", "--root=/srv"})
		s.Env = map[string]string{"LEVEL": fmt.Sprint(r.IntN(3))}
		s.SecretEnv = map[string]string{"TOKEN": "MCP_" + name}
	} else {
		s.URL, s.TokenSecret = "https://mcp.test/"+name, "MCP_"+name
	}
	if coin(r) {
		s.Tools = []string{"*"}
	}
	for _, tool := range some(r, []string{"a", "b", "c"}) {
		s.Impact[tool] = []string{kairos.ImpactRead, kairos.ImpactWrite}[r.IntN(2)]
	}
	return s
}

func genCell(r *rand.Rand) kairos.CellBudget {
	n := func(hi int) int { return []int{0, 1 + r.IntN(hi)}[r.IntN(2)] }
	return kairos.CellBudget{TimeBudgetMS: n(60000), MaxToolCalls: n(100), MaxBytesRead: int64(n(1 << 22)), MaxBytesWritten: int64(n(1 << 20)),
		MaxNetworkCalls: n(32), MemoryLimitMB: n(128), MaxOutputBytes: int64(n(1 << 16)),
		RiskTier: []string{"", "low", "medium", "high"}[r.IntN(4)]}
}

func genBudgets(r *rand.Rand, p *kairos.Policy) {
	p.Budgets.Defaults = p.Budgets.Defaults.Overlay(genCell(r))
	p.Budgets.PerVerb = map[string]kairos.CellBudget{}
	for _, v := range some(r, kairos.Verbs) {
		p.Budgets.PerVerb[v] = genCell(r)
	}
	p.Budgets.PerRiskTier = map[string]kairos.CellBudget{}
	for _, t := range some(r, policy.RiskTiers) {
		c := genCell(r)
		c.RiskTier = ""
		p.Budgets.PerRiskTier[t] = c
	}
}

func genCaps(r *rand.Rand) kairos.SpendCaps {
	tok := func() *int64 {
		if coin(r) {
			return nil
		}
		v := int64(r.IntN(100000))
		return &v
	}
	usd := func() *float64 {
		if coin(r) {
			return nil
		}
		v := float64(r.IntN(1000)) / 100
		return &v
	}
	return kairos.SpendCaps{DailyTokens: tok(), MonthlyTokens: tok(), DailyUSD: usd(), MonthlyUSD: usd()}
}

func genSpend(r *rand.Rand, p *kairos.Policy) {
	s := &p.Budgets.Spend
	s.SpendCaps = genCaps(r)
	s.PerUser = map[string]kairos.SpendCaps{}
	for _, id := range some(r, []string{"2001", "2002", "2003"}) {
		s.PerUser[id] = genCaps(r)
	}
	bot := genCaps(r)
	s.BotMonthlyUSD, s.BotMonthlyTokens = bot.MonthlyUSD, bot.MonthlyTokens
	if coin(r) {
		v := float64(r.IntN(100)) / 100
		s.BackgroundShare = &v
	}
	s.NoticeAt = float64(r.IntN(99)) / 100
}

func genModels(r *rand.Rand, p *kairos.Policy) {
	p.Models = map[string]kairos.ModelSpec{}
	for _, name := range some(r, []string{"gpt-4o", "local-llm", "house-model"}) {
		spec := kairos.ModelSpec{ContextWindow: r.IntN(200000), ToolCalling: []string{"", kairos.ToolCallingPrompted}[r.IntN(2)]}
		if coin(r) {
			spec.Price = &kairos.ModelPrice{Input: float64(r.IntN(500)) / 100, Output: float64(r.IntN(1500)) / 100,
				CachedInput: float64(r.IntN(100)) / 100, AudioPerMinute: float64(r.IntN(10)) / 1000, PerImage: float64(r.IntN(10)) / 1000}
		}
		p.Models[name] = spec
	}
	p.Agent.Model = []string{"", "gpt-4o", "local-llm"}[r.IntN(3)]
	p.Agent.FallbackModels = some(r, []string{"gpt-4o-mini", "house-model"})
	p.Agent.EmbeddingModel = []string{"", "text-embedding-3-small"}[r.IntN(2)]
}

// both applies a precondition to the policy in force and the proposed
// one alike (each gets its own values, nothing shared).
func both(old, proposed *kairos.Policy, f func(p *kairos.Policy)) {
	f(old)
	f(proposed)
}

// cloneServer copies a server, its slices and maps.
func cloneServer(s kairos.MCPServer) kairos.MCPServer {
	s.Args, s.Tools = slices.Clone(s.Args), slices.Clone(s.Tools)
	s.Env, s.SecretEnv, s.Impact = maps.Clone(s.Env), maps.Clone(s.SecretEnv), maps.Clone(s.Impact)
	return s
}

// ensureServer gives both policies the same server called name (the one
// in force, or a new stdio one) and returns its name.
func ensureServer(r *rand.Rand, old, proposed *kairos.Policy, stdio bool) string {
	name := []string{"files", "home", "notes"}[r.IntN(3)]
	s, ok := old.MCP.Servers[name]
	if !ok || (s.Command != "") != stdio {
		s = kairos.MCPServer{Tools: []string{"a"}}
		if stdio {
			s.Command, s.Args, s.Env, s.SecretEnv = "/usr/local/bin/mcp-"+name, []string{"--stdio"}, map[string]string{"L": "1"}, map[string]string{"T": "X"}
		} else {
			s.URL, s.TokenSecret = "https://mcp.test/"+name, "MCP_"+name
		}
	}
	both(old, proposed, func(p *kairos.Policy) { p.MCP.Servers[name] = cloneServer(s) })
	return name
}

// editServer changes the proposed policy's copy of a server.
func editServer(p *kairos.Policy, name string, f func(s *kairos.MCPServer)) {
	s := cloneServer(p.MCP.Servers[name])
	f(&s)
	p.MCP.Servers[name] = s
}

// editCell changes one layer's cell budget (a map entry) of p.
func editCell(m map[string]kairos.CellBudget, key string, f func(c *kairos.CellBudget)) {
	c := m[key]
	f(&c)
	m[key] = c
}

// editCaps changes one user's spending caps of p.
func editCaps(p *kairos.Policy, id string, f func(c *kairos.SpendCaps)) {
	c := p.Budgets.Spend.PerUser[id]
	f(&c)
	p.Budgets.Spend.PerUser[id] = c
}
