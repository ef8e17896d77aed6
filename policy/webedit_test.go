package policy_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

// webSeeds is how many random policies each property is tried on.
const webSeeds = 200

func asWebEdit(err error, target **policy.WebEditError) bool { return errors.As(err, target) }

// checkRefused fails unless err refuses the edit naming key, as the API
// and the console show it.
func checkRefused(t *testing.T, err error, key, what string) {
	t.Helper()
	var we *policy.WebEditError
	if !asWebEdit(err, &we) {
		t.Fatalf("%s: %v, want a refusal naming %s", what, err, key)
	}
	msg := kairos.ErrorMessage(err)
	if we.Key != key || kairos.ErrorCode(err) != kairos.EFORBIDDEN || !strings.Contains(msg, key) || !strings.Contains(msg, "edit the policy file on the host") {
		t.Fatalf("%s: refused %q (%s: %q), want key %s, forbidden, and where to edit", what, we.Key, kairos.ErrorCode(err), msg, key)
	}
}

// Every widening of every key family is refused naming its key, on
// random policies, alone and after random narrowing edits of the same
// text.
func TestWebEditRefusalNamesEachWideningKey(t *testing.T) {
	ws, ns := widenings(), narrowings()
	for seed := range uint64(webSeeds) {
		r := rand.New(rand.NewPCG(seed, 99))
		for _, w := range ws {
			old, proposed := genPolicy(seed), genPolicy(seed)
			var did []string
			for range r.IntN(3) {
				n := ns[r.IntN(len(ns))]
				n.apply(r, old, proposed)
				did = append(did, n.name)
			}
			key := w.apply(r, old, proposed)
			checkRefused(t, policy.WebEditRefusal(old, proposed), key, "seed "+strconv.FormatUint(seed, 10)+", after "+strings.Join(did, ", ")+", widening "+w.pattern)
		}
	}
}

// Narrowing and tuning edits, one or several, are accepted; so is the
// policy in force itself.
func TestWebEditRefusalAcceptsNarrowingAndTuning(t *testing.T) {
	ns := narrowings()
	for seed := range uint64(webSeeds) {
		r := rand.New(rand.NewPCG(seed, 5))
		old, proposed := genPolicy(seed), genPolicy(seed)
		if err := policy.WebEditRefusal(old, proposed); err != nil {
			t.Fatalf("seed %d: the policy in force, unchanged: %v", seed, err)
		}
		var did []string
		for range 1 + r.IntN(6) {
			n := ns[r.IntN(len(ns))]
			n.apply(r, old, proposed)
			did = append(did, n.name)
			if err := policy.WebEditRefusal(old, proposed); err != nil {
				t.Fatalf("seed %d: %s: refused: %v", seed, strings.Join(did, ", "), err)
			}
		}
	}
}

// WebEditRefusal reads both policies and changes neither.
func TestWebEditRefusalChangesNeither(t *testing.T) {
	for seed := range uint64(15) {
		for _, w := range widenings() {
			o1, p1, o2, p2 := genPolicy(seed), genPolicy(seed), genPolicy(seed), genPolicy(seed)
			w.apply(rand.New(rand.NewPCG(seed, 1)), o1, p1)
			w.apply(rand.New(rand.NewPCG(seed, 1)), o2, p2)
			_ = policy.WebEditRefusal(o1, p1)
			if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(p1, p2) {
				t.Fatalf("seed %d, %s: a policy changed under WebEditRefusal", seed, w.pattern)
			}
		}
	}
}

// webBase is a policy file in force for the examples.
const webBase = `access:
  operators: [1001]
  allowed_users: [2002]
features:
  network: true
network:
  allow_list: ["api.example.com", "*.example.org"]
  methods: [GET]
approvals:
  required: [memory.forget, mcp.write]
budgets:
  spend:
    daily_usd: 1.0
    per_user:
      "2002": {daily_usd: 0.5}
mcp:
  servers:
    home:
      url: https://ha.example.org/mcp
      token_secret: HA
      tools: [lights]
`

// The rule on policy files as an operator writes them (through Parse,
// with its defaults, anchors and aliases).
func TestWebEditRefusalExamples(t *testing.T) {
	old, err := policy.Parse("policy.yaml", []byte(webBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to, key string
	}{
		{"a clock setting", "access:", "clock:\n  mode: normal\naccess:", ""},
		{"a lower cap", "daily_usd: 1.0", "daily_usd: 0.25", ""},
		{"one more approval", "[memory.forget, mcp.write]", "[memory.forget, mcp.write, schedule.create]", ""},
		{"fewer hosts", `["api.example.com", "*.example.org"]`, `["api.example.com"]`, ""},
		{"a host under an allowed pattern", `"*.example.org"]`, `"*.example.org", "api.eu.example.org"]`, ""},
		{"no methods (cells get GET)", "methods: [GET]", "methods: []", ""},
		{"an agent limit", "access:", "agent:\n  max_steps: 3\naccess:", ""},
		{"an MCP stdio command", "    home:", "    shell:\n      command: /bin/sh\n      args: [-c, id]\n    home:", "mcp.servers.shell.command"},
		{"a server renamed", "    home:", "    home2:", "mcp.servers.home2.url"},
		{"a server dropped", "mcp:\n  servers:\n    home:\n      url: https://ha.example.org/mcp\n      token_secret: HA\n      tools: [lights]\n", "", ""},
		{"another MCP URL", "https://ha.example.org/mcp", "https://attacker.test/mcp", "mcp.servers.home.url"},
		{"all of a server's tools", "tools: [lights]", "tools: [\"*\"]", "mcp.servers.home.tools"},
		{"a writing tool marked read", "tools: [lights]", "tools: [lights]\n      impact: {lights: read}", "mcp.servers.home.impact.lights"},
		{"another secret", "token_secret: HA", "token_secret: API_KEY", "mcp.servers.home.token_secret"},
		{"a wider host pattern", `"*.example.org"`, `"*.org"`, "network.allow_list"},
		{"POST", "methods: [GET]", "methods: [GET, POST]", "network.methods"},
		{"secrets for cells", "network: true", "network: true\n  credentials_access: true", "features.credentials_access"},
		{"a stranger", "allowed_users: [2002]", "allowed_users: [2002, 666]", "access.allowed_users"},
		{"an approval dropped", "[memory.forget, mcp.write]", "[mcp.write]", "approvals.required"},
		{"a higher cap", "daily_usd: 1.0", "daily_usd: 1.5", "budgets.spend.daily_usd"},
		{"a user's cap lifted", "\"2002\": {daily_usd: 0.5}", "\"2002\": {daily_usd: 0.9}", "budgets.spend.per_user.2002.daily_usd"},
		{"a cheaper model", "access:", "models:\n  gpt-4o:\n    price: {input: 0.01, output: 0.01}\naccess:", "models.gpt-4o.price.input"},
		{"impactful actions unconfirmed", "access:", "clock:\n  inference:\n    require_confirmation_for_impactful_actions: false\naccess:", "clock.inference.require_confirmation_for_impactful_actions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(webBase, tc.from) {
				t.Fatalf("%q is not in the base policy", tc.from)
			}
			proposed, err := policy.Parse("policy.yaml", []byte(strings.Replace(webBase, tc.from, tc.to, 1)))
			if err != nil {
				t.Fatalf("the edit does not parse: %v", err)
			}
			err = policy.WebEditRefusal(old, proposed)
			if tc.key == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkRefused(t, err, tc.key, tc.name)
		})
	}
}
