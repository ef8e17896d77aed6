package policy

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// WebEditError refuses a policy edit made through the web (the query
// API's PUT /api/v1/policy or the console's editor) because it would
// widen the policy in force. It unwraps to an EFORBIDDEN kairos.Error
// whose message names the key and says to edit the file on the host.
type WebEditError struct {
	Key string // the first widening key, as a path: "mcp.servers.home.command"
	Why string // what the change would do, e.g. "it would run or reach something new on the host"
}

func (e *WebEditError) Error() string { return e.message() }

// Unwrap makes kairos.ErrorCode say EFORBIDDEN and kairos.ErrorMessage
// give the sentence.
func (e *WebEditError) Unwrap() error { return kairos.Errorf(kairos.EFORBIDDEN, "%s", e.message()) }

func (e *WebEditError) message() string {
	return fmt.Sprintf("Not saved: %s: %s. The web may only narrow this; edit the policy file on the host.", e.Key, e.Why)
}

// webCheck is one family of keys a web edit may not widen: check returns
// the first widening key ("" when there is none).
type webCheck struct {
	why   string
	check func(old, proposed *kairos.Policy) string
}

// webChecks are WebEditRefusal's families, in the order they are asked.
var webChecks = []webCheck{
	{"it would run or reach something new on the host", mcpWidening},
	{"it would turn on a feature or a tool", featuresWidening},
	{"it would let code cells reach more of the network", networkWidening},
	{"it would let more people reach the agent", accessWidening},
	{"it would ask a human less often", approvalsLoosening},
	{"it would raise a budget or a spending cap", budgetsRaising},
	{"it would let research read, send or spend more", researchWidening},
}

// WebEditRefusal decides whether the web may replace the policy in force
// (old; nil means the defaults) with proposed: nil when the edit only
// narrows or tunes, a *WebEditError naming the first widening key when it
// would
//
//   - run or reach something new on the host: an MCP server added, or a
//     server's command, args, env, secret_env, url, transport or
//     token_secret changed, a disabled server enabled, its tools widened;
//   - turn something on: a features flag, schedules.enabled or
//     schedules.tasks_may_use_tools turned on, a tool taken out of
//     agent.disabled_tools;
//   - let cells reach more: a network.allow_list entry that no entry in
//     force covers, a method not in network.methods, a blocked category
//     removed;
//   - let more people in: an operator or allowed user added,
//     access.pairing turned on, access.group_replies no longer "mention";
//   - loosen approvals: an action taken out of approvals.required or out of
//     approvals.never_grant (it could be granted then), an MCP
//     tool's impact lowered from write to read,
//     clock.inference.require_confirmation_for_impactful_actions turned
//     off (approvals.timeout is free: an expired request is denied);
//   - raise budgets: any cell budget a verb gets (budgets.defaults,
//     per_verb, per_risk_tier, a verb's risk_tier), any spending cap
//     raised or removed (budgets.spend, its per_user overrides, the bot's
//     monthly caps, background_share), a model's price lowered or removed,
//     or a model without a price named while a US-dollar cap applies (its
//     calls would not count against it);
//   - let research read, send or spend more (researchWidening): research
//     or a tier turned on, a folder or kiwix-serve named, a domain added
//     to research.web.allow_list, another external model, a size or a
//     research budget raised.
//
// Everything else (the clock, sessions, agent limits and models, media,
// schedules' limits, skills, MCP timeouts) is tuning the web may change.
// The function is pure: it reads both policies and changes neither.
func WebEditRefusal(old, proposed *kairos.Policy) error {
	if old == nil {
		old = kairos.DefaultPolicy()
	}
	for _, c := range webChecks {
		if key := c.check(old, proposed); key != "" {
			return &WebEditError{Key: key, Why: c.why}
		}
	}
	return nil
}

// mcpWidening: a server the policy in force lacks, or a change to what a
// server runs, where it connects, what it is handed, whether it runs and
// which of its tools are offered.
func mcpWidening(old, proposed *kairos.Policy) string {
	for _, name := range sortedKeys(proposed.MCP.Servers) {
		path := "mcp.servers." + name
		n := proposed.MCP.Servers[name]
		o, ok := old.MCP.Servers[name]
		if !ok {
			switch {
			case n.Command != "":
				return path + ".command"
			case n.URL != "":
				return path + ".url"
			}
			return path
		}
		if key := mcpServerWidening(o, n); key != "" {
			return path + "." + key
		}
	}
	return ""
}

func mcpServerWidening(o, n kairos.MCPServer) string {
	switch {
	case n.Command != o.Command:
		return "command"
	case !slices.Equal(n.Args, o.Args):
		return "args"
	case !maps.Equal(n.Env, o.Env):
		return "env"
	case !maps.Equal(n.SecretEnv, o.SecretEnv):
		return "secret_env"
	case n.URL != o.URL:
		return "url"
	case n.TransportKind() != o.TransportKind():
		return "transport"
	case n.TokenSecret != o.TokenSecret:
		return "token_secret"
	case o.Disabled && !n.Disabled:
		return "disabled"
	}
	for _, tool := range n.Tools {
		if !o.Allows(tool) {
			return "tools"
		}
	}
	return ""
}

// featuresWidening: a flag of features turned on (every bool field, so a
// new flag is guarded the day it is added), or a tool made present.
func featuresWidening(old, proposed *kairos.Policy) string {
	o, n := reflect.ValueOf(old.Features), reflect.ValueOf(proposed.Features)
	for i := range o.NumField() {
		if o.Field(i).Kind() == reflect.Bool && !o.Field(i).Bool() && n.Field(i).Bool() {
			return "features." + yamlName(o.Type().Field(i))
		}
	}
	switch {
	case !old.Schedules.Enabled && proposed.Schedules.Enabled:
		return "schedules.enabled"
	case !old.Schedules.TasksMayUseTools && proposed.Schedules.TasksMayUseTools:
		return "schedules.tasks_may_use_tools"
	case !subset(old.Agent.DisabledTools, proposed.Agent.DisabledTools):
		return "agent.disabled_tools"
	}
	return ""
}

// networkWidening: a host no entry in force covers, a new method, or a
// blocked category removed.
func networkWidening(old, proposed *kairos.Policy) string {
	for _, h := range proposed.Network.AllowList {
		if !hostCovered(h, old.Network.AllowList) {
			return "network.allow_list"
		}
	}
	if !subset(methods(proposed.Network.Methods), methods(old.Network.Methods)) {
		return "network.methods"
	}
	if !subset(old.Network.BlockedCategories, proposed.Network.BlockedCategories) {
		return "network.blocked_categories"
	}
	return ""
}

// hostCovered reports whether an allow_list entry (a host or "*.suffix")
// lets a cell reach nothing that list does not: the same entry, or a
// host or pattern under one of list's "*.suffix" (which, as the sandbox
// reads it, matches the subdomains of suffix, not suffix itself).
func hostCovered(entry string, list []string) bool {
	e := normAllow(entry)
	for _, p := range list {
		p = normAllow(p)
		if p == "" {
			continue
		}
		if p == e {
			return true
		}
		if suf, ok := strings.CutPrefix(p, "*."); ok && strings.HasSuffix(strings.TrimPrefix(e, "*"), "."+suf) {
			return true
		}
	}
	return e == ""
}

func normAllow(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// methods is network.methods as cells get them: upper-case, GET when
// empty.
func methods(ms []string) []string {
	var out []string
	for _, m := range ms {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return []string{"GET"}
	}
	return out
}

// accessWidening: someone who could not reach the agent (or was no
// operator) now can, or strangers and group chatter get in.
func accessWidening(old, proposed *kairos.Policy) string {
	a := proposed.Access
	for _, id := range a.Operators {
		if !old.IsOperator(id) {
			return "access.operators"
		}
	}
	for _, id := range a.AllowedUsers {
		if !old.IsAllowed(id) {
			return "access.allowed_users"
		}
	}
	switch {
	case a.Pairing && !old.Access.Pairing:
		return "access.pairing"
	case a.GroupReplies != old.Access.GroupReplies && a.GroupReplies != "mention":
		return "access.group_replies"
	}
	return ""
}

// approvalsLoosening: something that asked a human would no longer ask.
func approvalsLoosening(old, proposed *kairos.Policy) string {
	if !subset(old.Approvals.Required, proposed.Approvals.Required) {
		return "approvals.required"
	}
	if !subset(old.Approvals.NeverGrant, proposed.Approvals.NeverGrant) {
		return "approvals.never_grant" // something approved once only could be granted
	}
	if old.Clock.Inference.RequireConfirmationForImpactfulActions && !proposed.Clock.Inference.RequireConfirmationForImpactfulActions {
		return "clock.inference.require_confirmation_for_impactful_actions"
	}
	for _, name := range sortedKeys(proposed.MCP.Servers) {
		n := proposed.MCP.Servers[name]
		o := old.MCP.Servers[name]
		for _, tool := range sortedKeys(n.Impact) {
			if o.ImpactOf(tool) == kairos.ImpactWrite && n.ImpactOf(tool) == kairos.ImpactRead {
				return "mcp.servers." + name + ".impact." + tool
			}
		}
	}
	return ""
}

// subset reports whether every element of a is in b.
func subset[T comparable](a, b []T) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
