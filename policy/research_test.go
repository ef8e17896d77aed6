package policy_test

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

// research: every bad value is refused at its own line and column with
// the key's path; a partial section keeps the defaults of what it leaves
// out.
func TestResearchValidation(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown tier", "research:\n  tiers: [memory, wiki]\n", `policy.yaml:2:19: research.tiers[1]: "wiki" is not one of memory, offline, web, model, book`},
		{"tier twice", "research:\n  tiers: [web, web]\n", `research.tiers[1]: "web" is listed twice`},
		{"kiwix not http", "research:\n  offline:\n    kiwix_url: ftp://zim.local\n", `policy.yaml:3:16: research.offline.kiwix_url: "ftp://zim.local" is not an http:// or https:// URL`},
		{"kiwix with password", "research:\n  offline:\n    kiwix_url: http://u:p@zim.local\n", `research.offline.kiwix_url: put no credentials in the URL`},
		{"allow list URL", "research:\n  web:\n    allow_list: [https://example.org/x]\n", `research.web.allow_list[0]: "https://example.org/x": write a host name`},
		{"allow list junk", "research:\n  web:\n    allow_list: [\"exa mple.org\"]\n", `research.web.allow_list[0]: "exa mple.org" is not a host name or *.suffix`},
		{"rounds zero", "research:\n  budgets:\n    quick:\n      rounds: 0\n", `policy.yaml:4:15: research.budgets.quick.rounds: must be between 1 and 50, got 0`},
		{"tokens low", "research:\n  budgets:\n    deep:\n      tokens:\n        verifier: 10\n", `research.budgets.deep.tokens.verifier: must be between 200 and 2000000, got 10`},
		{"wall time long", "research:\n  budgets:\n    normal:\n      wall_time: PT2H\n", `research.budgets.normal.wall_time: must be at most PT1H`},
		{"wall time zero", "research:\n  budgets:\n    normal:\n      wall_time: PT0S\n", `research.budgets.normal.wall_time: must be longer than zero`},
		{"bad duration", "research:\n  stale_after: two years\n", `policy.yaml:2:16:`},
		{"page bytes", "research:\n  web:\n    max_page_bytes: 10\n", `research.web.max_page_bytes: must be between 1024`},
		{"unknown key", "research:\n  tier: [web]\n", `unknown key "tier" in research`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.Parse("policy.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
	p, err := policy.Parse("policy.yaml", []byte("research:\n  tiers: [book, memory]\n  web:\n    allow_list: [\"*.example.org\"]\n  budgets:\n    quick:\n      rounds: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Research
	def := kairos.DefaultResearchPolicy()
	if !r.Enabled || !r.UsesTier(kairos.TierBook) || r.UsesTier(kairos.TierWeb) || r.Budgets.Quick.Rounds != 3 ||
		r.Budgets.Quick.ToolCalls != def.Budgets.Quick.ToolCalls || r.Budgets.Deep != def.Budgets.Deep || r.Web.MaxPageBytes != def.Web.MaxPageBytes {
		t.Fatalf("partial section = %+v", r)
	}
	if got := policy.Summary(p); !strings.Contains(got, "Research: tiers book, memory; offline folder none, kiwix-serve none; web 1 allowed domains") {
		t.Fatalf("summary lacks research:\n%s", got)
	}
	if b := r.Budgets.Budget("nonsense"); b != r.Budgets.Normal {
		t.Fatalf("an unknown depth gets %+v, want the normal budget", b)
	}
}
