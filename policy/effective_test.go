package policy

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kairos-agent/kairos"
)

// TestEffectiveRoundTrips: the policy in force written out and parsed
// back is the same policy, for the defaults and for files that change
// each section.
func TestEffectiveRoundTrips(t *testing.T) {
	files := map[string]string{
		"defaults": "",
		"access":   "access:\n  operators: [1001]\n  allowed_users: [2002, 2003]\n  pairing: false\n",
		"clock":    "clock:\n  mode: normal\n  ambiguity_threshold_hours: 3.5\n",
		"budgets":  "budgets:\n  defaults:\n    time_budget_ms: 20000\n  per_verb:\n    RESEARCH:\n      max_network_calls: 4\nagent:\n  disabled_tools: [search]\napprovals:\n  required: [memory.forget, mcp.write]\n  timeout: PT15M\n",
		"example":  mustRead(t, "../deploy/policy.example.yaml"),
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			want := kairos.DefaultPolicy()
			if text != "" {
				var err error
				if want, err = Parse("policy.yaml", []byte(text)); err != nil {
					t.Fatalf("fixture: %v", err)
				}
			}
			out, err := Effective(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse("effective.yaml", out)
			if err != nil {
				t.Fatalf("the effective policy does not parse: %v\n%s", err, out)
			}
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("round trip changed the policy (-want +got):\n%s\n%s", d, out)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
