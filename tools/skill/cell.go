package skill

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// verb is the cell verb of a skill's runs: RESEARCH when it reads the
// network, else BUILD (as the code tool classifies code).
func verb(v *kairos.SkillVersion) string {
	if len(v.Capabilities.Hosts) > 0 {
		return kairos.VerbResearch
	}
	return kairos.VerbBuild
}

// runCode is a skill's code followed by one call of run(input), chained
// rather than awaited: a run whose promise never settles leaves no output
// and the cell ends as soon as nothing is left to do, so the host says
// "never returned" at once instead of a timeout at the budget. The
// outcome leaves the cell as {nonce: value} or {nonce+"!": message} (a
// thrown error); the nonce is fresh for each cell, so settle tells it from
// anything the skill's own code passed to output(). A test runs exactly
// this (tests.go).
func runCode(code, nonce string, input json.RawMessage) string {
	return code + "\n;Promise.resolve().then(() => run(" + string(input) + ")).then(\n" + settleJS(nonce)
}

// settleJS ends a chain whose value is the outcome: it outputs the value
// (undefined, a function or a symbol as null) or the thrown error's
// message, under the nonce.
func settleJS(nonce string) string {
	return "  (r) => output({\"" + nonce + "\": r === undefined || typeof r === \"function\" || typeof r === \"symbol\" ? null : r}),\n" +
		"  (e) => output({\"" + nonce + "!\": String(e && e.message !== undefined ? e.message : e)}));\n"
}

// newNonce is a cell's nonce: 24 hex digits.
func newNonce() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cellTask is the cell of one run of v with input, and its nonce. A run
// gets what its approval showed and the policy still allows (runGrant);
// a test (forTest) gets the very same cell (code, verb, budget, clock,
// the credentials switch and, for code that only reads, the network
// grant) except that it may not write to the network and is handed no
// secret values: the skill's code cannot tell it is under test but by
// trying what only an approved skill may do.
func (s *Skills) cellTask(p *kairos.Policy, v *kairos.SkillVersion, input json.RawMessage, forTest bool) (*kairos.CellTask, string) {
	g := approved(p, v)
	if forTest {
		g = testGrant(p, v)
	}
	net, secrets, budget := s.runGrant(p, v, g)
	nonce := newNonce()
	return &kairos.CellTask{Code: runCode(v.Code, nonce, input), Verb: verb(v), Budget: budget,
		Network: net, Secrets: secrets, Credentials: p.Features.CredentialsAccess, Now: s.cfg.Now()}, nonce
}

// settle turns a run cell's output back into what run(input) returned:
// Output becomes the bare value, a thrown error a failure with its
// message, and anything without the cell's nonce (nothing, or what the
// skill's code passed to output() itself) a failure saying run never
// returned.
func settle(res *kairos.CellResult, nonce string) {
	if !res.Success {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(res.Output, &m) == nil && len(m) == 1 {
		if v, ok := m[nonce]; ok {
			res.Output = v
			return
		}
		if e, ok := m[nonce+"!"]; ok {
			var msg string
			_ = json.Unmarshal(e, &msg)
			res.Success, res.ErrorCategory, res.Error, res.Output = false, kairos.CatRuntime, msg, nil
			return
		}
	}
	res.Success, res.ErrorCategory = false, kairos.CatRuntime
	res.Error = "run(input) never returned (its promise never settled)"
	if len(res.Output) > 0 {
		res.Error = "no result from run(input): the cell's output came from the skill's own output() call (return the result from run; do not call or replace output)"
	}
	res.Output = nil
}

func cellError(res *kairos.CellResult) string {
	msg := res.Error
	if msg == "" {
		msg = res.Stderr
	}
	if res.ErrorCategory != "" {
		msg = res.ErrorCategory + ": " + msg
	}
	return kairos.Clip(strings.TrimSpace(msg), 500)
}

// scrub removes secret values from a cell's texts.
func (s *Skills) scrub(res *kairos.CellResult) *kairos.CellResult {
	r := *res
	r.Stdout, r.Stderr, r.Error = s.red.Scrub(r.Stdout), s.red.Scrub(r.Stderr), s.red.Scrub(r.Error)
	r.Output = json.RawMessage(s.red.Scrub(string(r.Output)))
	return &r
}

func clipJSON(raw json.RawMessage, n int) json.RawMessage {
	if len(raw) <= n {
		return raw
	}
	b, _ := json.Marshal(kairos.Clip(string(raw), n))
	return b
}

// risks classifies a version (seed 004's risk classification) by what
// its approval would grant (v.Grant, else approvalGrant): network reads
// and writes, secrets, and a long run (a test's run took over half of
// the time budget).
func (s *Skills) risks(p *kairos.Policy, v *kairos.SkillVersion, tr *testRun) []string {
	g := v.Grant
	if g == nil {
		g = approvalGrant(p, v)
	}
	var out []string
	if len(g.Hosts) > 0 {
		out = append(out, kairos.RiskNetworkRead)
		if slices.ContainsFunc(g.Methods, func(m string) bool { return !slices.Contains(readMethods, m) }) {
			out = append(out, kairos.RiskNetworkWrite)
		}
		if len(g.Secrets) > 0 { // secrets reach a cell only with a host (approvalGrant)
			out = append(out, kairos.RiskSecrets)
		}
	}
	if tr != nil && tr.budget.TimeBudget > 0 && tr.longest*2 > tr.budget.TimeBudget {
		out = append(out, kairos.RiskLongRun)
	}
	return out
}
