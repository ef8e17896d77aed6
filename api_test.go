package kairos_test

import (
	"testing"

	"github.com/kairos-agent/kairos"
)

// Each scope covers itself and every narrower one, never a wider one;
// an unknown scope covers nothing and is covered by nothing.
func TestAPITokenAllows(t *testing.T) {
	for i, have := range kairos.Scopes {
		tok := &kairos.APIToken{Scope: have}
		for j, need := range kairos.Scopes {
			if got := tok.Allows(need); got != (j <= i) {
				t.Errorf("a %s token allows %s: %v", have, need, got)
			}
		}
		if tok.Allows("root") || tok.Allows("") {
			t.Errorf("a %s token allows an unknown scope", have)
		}
		if (&kairos.APIToken{Scope: "root"}).Allows(have) {
			t.Errorf("an unknown scope allows %s", have)
		}
	}
	if !(&kairos.APIToken{Scope: kairos.ScopeAdmin}).Allows(kairos.ScopeWrite) || (&kairos.APIToken{Scope: kairos.ScopeWrite}).Allows(kairos.ScopeAdmin) {
		t.Fatal("admin must cover write, and write must not cover admin")
	}
}
