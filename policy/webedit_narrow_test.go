package policy_test

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/kairos-agent/kairos"
)

// A narrowing changes only the proposed policy, and only to narrow it or
// to tune what the web may tune; old is read, never changed.
type narrowing struct {
	name  string
	apply func(r *rand.Rand, old, proposed *kairos.Policy)
}

func pick[T any](r *rand.Rand, xs []T) (T, bool) {
	var zero T
	if len(xs) == 0 {
		return zero, false
	}
	return xs[r.IntN(len(xs))], true
}

func without[T comparable](xs []T, x T) []T {
	return slices.DeleteFunc(slices.Clone(xs), func(y T) bool { return y == x })
}

func narrowings() []narrowing {
	var ns []narrowing
	for _, f := range [][]narrowing{mcpNarrowings(), listNarrowings(), cellNarrowings(), spendNarrowings(), tunings()} {
		ns = append(ns, f...)
	}
	return ns
}

func mcpNarrowings() []narrowing {
	server := func(r *rand.Rand, p *kairos.Policy) (string, bool) {
		return pick(r, slices.Sorted(maps.Keys(p.MCP.Servers)))
	}
	return []narrowing{
		{"remove a server", func(r *rand.Rand, _, p *kairos.Policy) {
			if name, ok := server(r, p); ok {
				delete(p.MCP.Servers, name)
			}
		}},
		{"disable a server", func(r *rand.Rand, _, p *kairos.Policy) {
			if name, ok := server(r, p); ok {
				editServer(p, name, func(s *kairos.MCPServer) { s.Disabled = true })
			}
		}},
		{"offer fewer of a server's tools", func(r *rand.Rand, _, p *kairos.Policy) {
			if name, ok := server(r, p); ok {
				editServer(p, name, func(s *kairos.MCPServer) { s.Tools = s.Tools[:r.IntN(len(s.Tools)+1)] })
			}
		}},
		{"mark a tool as writing", func(r *rand.Rand, _, p *kairos.Policy) {
			if name, ok := server(r, p); ok {
				editServer(p, name, func(s *kairos.MCPServer) {
					if s.Impact == nil {
						s.Impact = map[string]string{}
					}
					s.Impact[[]string{"a", "b", "c"}[r.IntN(3)]] = kairos.ImpactWrite
				})
			}
		}},
		{"a server's call timeout", func(r *rand.Rand, _, p *kairos.Policy) {
			if name, ok := server(r, p); ok {
				editServer(p, name, func(s *kairos.MCPServer) { s.CallTimeout = kairos.Duration{Seconds: float64(1 + r.IntN(600))} })
			}
		}},
	}
}

func listNarrowings() []narrowing {
	return []narrowing{
		{"turn a feature off", func(r *rand.Rand, _, p *kairos.Policy) {
			reflect.ValueOf(&p.Features).Elem().Field(r.IntN(reflect.TypeFor[kairos.Features]().NumField())).SetBool(false)
		}},
		{"turn schedules or their tools off", func(r *rand.Rand, _, p *kairos.Policy) {
			if coin(r) {
				p.Schedules.Enabled = false
			} else {
				p.Schedules.TasksMayUseTools = false
			}
		}},
		{"disable a tool", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Agent.DisabledTools = append(slices.Clone(p.Agent.DisabledTools), []string{"search", "code", "memory"}[r.IntN(3)])
		}},
		{"drop an allowed host", func(r *rand.Rand, _, p *kairos.Policy) {
			if h, ok := pick(r, p.Network.AllowList); ok {
				p.Network.AllowList = without(p.Network.AllowList, h)
			}
		}},
		{"drop a method (never the last: none means GET)", func(r *rand.Rand, _, p *kairos.Policy) {
			if m, ok := pick(r, p.Network.Methods); ok && len(p.Network.Methods) > 1 {
				p.Network.Methods = without(p.Network.Methods, m)
			}
		}},
		{"block a category", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Network.BlockedCategories = append(slices.Clone(p.Network.BlockedCategories), "*.tracker.test")
		}},
		{"remove someone", func(r *rand.Rand, _, p *kairos.Policy) {
			if id, ok := pick(r, p.Access.Operators); ok && coin(r) {
				p.Access.Operators = without(p.Access.Operators, id)
			} else if id, ok := pick(r, p.Access.AllowedUsers); ok {
				p.Access.AllowedUsers = without(p.Access.AllowedUsers, id)
			}
		}},
		{"close pairing and group chatter", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Access.Pairing, p.Access.GroupReplies = false, "mention"
		}},
		{"ask for an action", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Approvals.Required = append(slices.Clone(p.Approvals.Required), kairos.Actions[r.IntN(len(kairos.Actions))])
		}},
		{"any approval timeout (expiry denies)", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Approvals.Timeout = kairos.Duration{Hours: float64(1 + r.IntN(48))}
		}},
		{"confirm impactful actions", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Clock.Inference.RequireConfirmationForImpactfulActions = true
		}},
	}
}

// lowest is a limit no cell budget goes under: 1 ms of time (0 means the
// default 30 s), 0 of the rest.
func lowest(f string) int64 {
	if f == "time_budget_ms" {
		return 1
	}
	return 0
}

func cellNarrowings() []narrowing {
	return []narrowing{
		{"lower a default cell budget", func(r *rand.Rand, _, p *kairos.Policy) {
			f := cellLimits[r.IntN(len(cellLimits))]
			cellSet(&p.Budgets.Defaults, f, lowest(f))
		}},
		{"lower a verb's cell budget", func(r *rand.Rand, old, p *kairos.Policy) {
			verb, f := anyVerb(r), cellLimits[r.IntN(len(cellLimits))]
			if v := cellGet(old.Budgets.CellFor(verb), f); v >= 1 && cellGet(p.Budgets.CellFor(verb), f) >= 1 {
				editCell(p.Budgets.PerVerb, verb, func(c *kairos.CellBudget) { cellSet(c, f, 1) })
			}
		}},
	}
}

func spendNarrowings() []narrowing {
	return []narrowing{
		{"lower or add a cap for everyone", func(r *rand.Rand, _, p *kairos.Policy) {
			setCap(&p.Budgets.Spend.SpendCaps, capNames[r.IntN(len(capNames))], val(0))
		}},
		{"add a low cap for one user", func(r *rand.Rand, _, p *kairos.Policy) {
			editCaps(p, []string{"2001", "2002", "2999"}[r.IntN(3)], func(c *kairos.SpendCaps) { setCap(c, capNames[r.IntN(len(capNames))], val(0)) })
		}},
		{"lower the bot's caps and the background share", func(r *rand.Rand, _, p *kairos.Policy) {
			setCap(&p.Budgets.Spend, []string{"bot_monthly_usd", "bot_monthly_tokens"}[r.IntN(2)], val(0))
			p.Budgets.Spend.BackgroundShare = val(0)
		}},
		{"notice at another share", func(r *rand.Rand, _, p *kairos.Policy) { p.Budgets.Spend.NoticeAt = float64(r.IntN(99)) / 100 }},
		{"raise a model's price", func(r *rand.Rand, old, p *kairos.Policy) {
			name := []string{"gpt-4o", "house-model", "local-llm"}[r.IntN(3)]
			spec, _ := p.Model(name)
			dear := kairos.ModelPrice{Input: 100, CachedInput: 100, Output: 100, AudioPerMinute: 100, PerImage: 100}
			if spec.Price != nil {
				dear = *spec.Price
				dear.Input, dear.Output = dear.Input*2+1, dear.Output*2+1
			}
			own := p.Models[name]
			own.Price = &dear
			p.Models[name] = own
		}},
	}
}

// tunings change what the web may tune.
func tunings() []narrowing {
	return []narrowing{
		{"clock", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Clock.Mode, p.Clock.AmbiguityThresholdHours = []string{"off", "light", "normal"}[r.IntN(3)], float64(r.IntN(12))
		}},
		{"agent", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Agent.Persona, p.Agent.MaxSteps, p.Agent.MaxTurnTokens = "terse", 1+r.IntN(50), r.IntN(1e6)
		}},
		{"sessions and media", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Sessions.AutoDivide, p.Media.MaxDocumentBytes, p.Media.Vision = "weekly", r.IntN(1<<24), coin(r)
		}},
		{"schedules' limits and skills", func(r *rand.Rand, _, p *kairos.Policy) {
			p.Schedules.MaxPerUser, p.Schedules.MinInterval, p.Skills.MaxTests = r.IntN(500), kairos.Duration{Minutes: 1}, r.IntN(50)
		}},
		{"mcp timeouts and counts", func(r *rand.Rand, _, p *kairos.Policy) {
			p.MCP.MaxTools, p.MCP.CallTimeout = r.IntN(100), kairos.Duration{Minutes: float64(r.IntN(10))}
		}},
		{"a model's window", func(r *rand.Rand, _, p *kairos.Policy) {
			for name, spec := range p.Models {
				spec.ContextWindow, spec.ToolCalling = r.IntN(1e6), kairos.ToolCallingOff
				p.Models[name] = spec
			}
		}},
	}
}
