package main

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestEveryTestRunsBesideOthersOrSaysWhy: every top-level test of this
// package calls parallel (itself, or through a helper such as newEnv) or
// is listed in serialTests; one that runs alone holds up all the others
// (before: 35 did, and the package spent 324 of its 412 s running tests
// one at a time).
func TestEveryTestRunsBesideOthersOrSaysWhy(t *testing.T) {
	parallel(t)
	alone, err := testkit.RunAlone(serialTests, "parallel")
	if err != nil {
		t.Fatal(err)
	}
	if len(alone) > 0 {
		t.Errorf("%d tests run alone: call parallel(t) first, or list them in serialTests with the reason:\n%s", len(alone), strings.Join(alone, "\n"))
	}
}
