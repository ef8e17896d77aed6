package adversarial

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestEverySectionRunsBesideOthers: each section drives its own `kairos
// run` process against its own fakes and data directory, and mostly
// waits; one run alone holds up every other section (before: nine did,
// 275 of the package's 300 s).
func TestEverySectionRunsBesideOthers(t *testing.T) {
	t.Parallel()
	alone, err := testkit.RunAlone(nil, "Parallel")
	if err != nil {
		t.Fatal(err)
	}
	if len(alone) > 0 {
		t.Errorf("%d sections run alone: call t.Parallel() first:\n%s", len(alone), strings.Join(alone, "\n"))
	}
}
