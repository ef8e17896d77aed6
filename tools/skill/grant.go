package skill

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/cell"
)

// readMethods are the methods a skill gets when its code does not
// visibly write (or under test).
var readMethods = []string{"GET", "HEAD"}

// approvalGrant is what an approval of v shows, under the policy now:
// the declared hosts within the allow-list, GET/HEAD unless the code
// visibly writes and the policy allows writing (then the policy's
// methods), the declared secrets when credentials are on, and the run
// budget. A run never gets more than this (runGrant).
func approvalGrant(p *kairos.Policy, v *kairos.SkillVersion) *kairos.SkillGrant {
	g := cell.GrantFor(p)
	out := &kairos.SkillGrant{Budget: cell.BudgetFor(p, verb(v)).PolicyBudget()}
	for _, h := range v.Capabilities.Hosts {
		if g.Enabled && kairos.HostAllowed(h, g.AllowHosts) {
			out.Hosts = append(out.Hosts, h)
		}
	}
	if len(out.Hosts) == 0 {
		return out // secrets reach a cell only with a host to send them to
	}
	out.Methods = g.Methods
	if !cell.Scan(v.Code).NetworkWrite {
		out.Methods = intersect(g.Methods, readMethods)
	}
	if p.Features.CredentialsAccess {
		out.Secrets = slices.Clone(v.Capabilities.Secrets)
	}
	return out
}

// testGrant is what a test's cell may use: the approval's grant without
// writes and without secrets (nobody approved anything yet).
func testGrant(p *kairos.Policy, v *kairos.SkillVersion) *kairos.SkillGrant {
	g := approvalGrant(p, v)
	g.Methods, g.Secrets = intersect(g.Methods, readMethods), nil
	return g
}

// approved is the grant v's approval showed. A version approved before
// grants were kept has none stored: its approval showed its hosts, its
// risk marks and its secrets, so it gets its hosts, GET/HEAD unless it was
// marked network_write (then the policy's methods, as it was approved
// to), its secrets only if it was marked for them, and no budget beyond
// the policy's.
func approved(p *kairos.Policy, v *kairos.SkillVersion) *kairos.SkillGrant {
	if v.Grant != nil {
		return v.Grant
	}
	out := &kairos.SkillGrant{Hosts: v.Capabilities.Hosts}
	if len(out.Hosts) == 0 {
		return out
	}
	out.Methods = readMethods
	if slices.Contains(v.Risk, kairos.RiskNetworkWrite) {
		out.Methods = cell.GrantFor(p).Methods
	}
	if slices.Contains(v.Risk, kairos.RiskSecrets) {
		out.Secrets = v.Capabilities.Secrets
	}
	return out
}

// runGrant is what one cell of v gets: the intersection of the grant
// (what was approved, or testGrant for a test) and what the policy
// allows now. Hosts taken off the allow-list, methods no longer allowed,
// secrets no longer configured or switched off are gone; and nothing the
// policy added since (a method, a budget raised) is there.
func (s *Skills) runGrant(p *kairos.Policy, v *kairos.SkillVersion, g *kairos.SkillGrant) (kairos.NetworkGrant, map[string]string, kairos.Budget) {
	budget := capBudget(cell.BudgetFor(p, verb(v)), g.Budget)
	now := cell.GrantFor(p)
	var hosts []string
	for _, h := range g.Hosts {
		if now.Enabled && kairos.HostAllowed(h, now.AllowHosts) {
			hosts = append(hosts, h)
		}
	}
	methods := intersect(g.Methods, now.Methods)
	if len(hosts) == 0 || len(methods) == 0 {
		return kairos.NetworkGrant{}, nil, budget
	}
	now.AllowHosts, now.Methods = hosts, methods
	if !p.Features.CredentialsAccess {
		return now, nil, budget
	}
	var secrets map[string]string
	for _, name := range g.Secrets {
		if val, ok := s.cfg.Secrets[name]; ok && val != "" {
			if secrets == nil {
				secrets = map[string]string{}
			}
			secrets[name] = val
		}
	}
	return now, secrets, budget
}

// intersect is the methods of a that b holds too, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, m := range a {
		if slices.Contains(b, m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// capBudget is the policy's budget now, no field above the approved one
// (a zero approved field caps nothing; a zero field now is the sandbox's
// default, capped like any other).
func capBudget(now kairos.Budget, ap kairos.CellBudget) kairos.Budget {
	def := kairos.DefaultBudget()
	capInt := func(cur *int, def, limit int) {
		if limit > 0 && (*cur == 0 && def > limit || *cur > limit) {
			*cur = limit
		}
	}
	capInt64 := func(cur *int64, def, limit int64) {
		if limit > 0 && (*cur == 0 && def > limit || *cur > limit) {
			*cur = limit
		}
	}
	if limit := time.Duration(ap.TimeBudgetMS) * time.Millisecond; limit > 0 && (now.TimeBudget == 0 || now.TimeBudget > limit) {
		now.TimeBudget = limit
	}
	capInt(&now.MaxToolCalls, def.MaxToolCalls, ap.MaxToolCalls)
	capInt(&now.MaxNetworkCalls, def.MaxNetworkCalls, ap.MaxNetworkCalls)
	capInt64(&now.MaxBytesRead, def.MaxBytesRead, ap.MaxBytesRead)
	capInt64(&now.MaxBytesWritten, def.MaxBytesWritten, ap.MaxBytesWritten)
	capInt64(&now.MaxOutputBytes, def.MaxOutputBytes, ap.MaxOutputBytes)
	capInt64(&now.MemoryLimit, def.MemoryLimit, int64(ap.MemoryLimitMB)<<20)
	return now
}

// describeGrant is the grant as the approval shows it.
func describeGrant(g *kairos.SkillGrant) string {
	var b strings.Builder
	if len(g.Hosts) == 0 {
		b.WriteString("Network: none\n")
	} else {
		fmt.Fprintf(&b, "Network: %s to %s\n", strings.Join(g.Methods, ", "), strings.Join(g.Hosts, ", "))
	}
	fmt.Fprintf(&b, "Secrets: %s\n", orDefault(strings.Join(g.Secrets, ", "), "none"))
	bu := g.Budget
	fmt.Fprintf(&b, "Budget of a run: %s, %d network calls, %d bytes read, %d bytes sent, %d MiB of memory\n",
		time.Duration(bu.TimeBudgetMS)*time.Millisecond, bu.MaxNetworkCalls, bu.MaxBytesRead, bu.MaxBytesWritten, bu.MemoryLimitMB)
	b.WriteString("A run never gets more than this, whatever the policy allows later: more needs an update.\n")
	return b.String()
}

// sameGrant reports whether two grants allow the same.
func sameGrant(a, b *kairos.SkillGrant) bool {
	return slices.Equal(a.Hosts, b.Hosts) && slices.Equal(a.Methods, b.Methods) && slices.Equal(a.Secrets, b.Secrets) && a.Budget == b.Budget
}
