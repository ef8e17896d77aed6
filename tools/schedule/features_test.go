package schedule_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
)

// With features.cli_exec off, watching cells are absent: the description
// says nothing of them, the schema has no `code`, and a create with code
// is refused; with it on (the default) they are offered.
func TestSpecWithoutCellsHasNoCode(t *testing.T) {
	for _, on := range []bool{false, true} {
		pol := kairos.DefaultPolicy()
		pol.Features.CLIExec = on
		tool := schedtool.New(schedtool.Config{Store: store.NewScheduleStore(storetest.MustOpenDB(t)),
			Policy: func() *kairos.Policy { return pol },
			Zone:   func(context.Context, *kairos.ToolInvocation) (string, error) { return "UTC", nil }})
		spec := tool.Spec()
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatal(err)
		}
		_, hasCode := schema.Properties["code"]
		mentions := strings.Contains(spec.Description, "watching cell") || strings.Contains(spec.Description, "code")
		if hasCode != on || mentions != on {
			t.Fatalf("cli_exec %v: code property %v, description mentions cells %v:\n%s", on, hasCode, mentions, spec.Description)
		}
		if _, ok := schema.Properties["text"]; !ok {
			t.Fatalf("cli_exec %v: no text property", on)
		}
		if on {
			continue
		}
		_, err := tool.Call(context.Background(), inv(`{"action":"create","when":"2026-11-25T09:00:00Z","code":"output({notify:'x'})"}`, false))
		if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), "cli_exec") {
			t.Fatalf("cell create with cli_exec off: %v", err)
		}
		_, err = tool.Call(context.Background(), inv(`{"action":"create","when":"2026-11-25T09:00:00Z"}`, false))
		if err == nil || strings.Contains(kairos.ErrorMessage(err), "code") {
			t.Fatalf("create without a kind, cli_exec off: %v", err)
		}
	}
}
