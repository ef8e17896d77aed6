package research_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestToolArgumentsAndAction(t *testing.T) {
	r := newRig(t)
	tool := r.eng.Tool()
	if tool.Spec().Name != "research" {
		t.Fatalf("name %q", tool.Spec().Name)
	}
	for _, bad := range []string{`{}`, `{"question": "  "}`, `{"question": "x", "depth": "forever"}`, `{"question": "x", "tiers": ["web"]}`, `[1]`} {
		if _, err := tool.Action(context.Background(), &kairos.ToolInvocation{Arguments: json.RawMessage(bad)}); kairos.ErrorCode(err) != kairos.EINVALID {
			t.Errorf("%s: %v", bad, err)
		}
	}
	act, err := tool.Action(context.Background(), &kairos.ToolInvocation{Arguments: json.RawMessage(`{"question": "why?", "depth": "quick"}`)})
	if err != nil || act.Name != kairos.ActionResearch || act.Impactful || act.Capability != kairos.CapResearch {
		t.Fatalf("action %+v, %v", act, err)
	}
}

// The tool's result has the contract's shape; it is tainted exactly when
// a source outside the user's own untainted memories was read.
func TestToolResultAndTaint(t *testing.T) {
	r := newRig(t)
	r.remember("Dentist appointment on 2026-12-03 at 14:30.", r.now)
	r.file("rivers/kestrel.md", "The Kestrel River is 412 kilometres long.")
	call := func(q string, inv kairos.ToolInvocation) (*kairos.ToolResult, map[string]any) {
		t.Helper()
		inv.Arguments, _ = json.Marshal(map[string]string{"question": q})
		inv.UserKey = user
		res, err := r.eng.Tool().Call(context.Background(), &inv)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(res.Content, &m); err != nil {
			t.Fatal(err)
		}
		return res, m
	}
	res, m := call("When is my dentist appointment?", kairos.ToolInvocation{})
	if res.Tainted || m["abstained"] != false || m["confidence"] == nil || m["trace_id"] == nil || m["spend"] == nil {
		t.Fatalf("memory answer: tainted %v, %v", res.Tainted, m)
	}
	src := m["sources"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "tier", "title", "quote", "retrieved_at"} {
		if _, ok := src[k]; !ok {
			t.Fatalf("source lacks %q: %v", k, src)
		}
	}
	res, _ = call("How long is the Kestrel River?", kairos.ToolInvocation{})
	if !res.Tainted {
		t.Fatal("an answer from the offline folder is not tainted")
	}
	// A URL the user wrote may be read; one in a tainted turn may not.
	r.pol.Research.Tiers = []string{kairos.TierWeb}
	r.web.page("facts.example/halvard", "<p>The Halvard Prize was first awarded in 1962.</p>")
	_, m = call("When was the Halvard Prize first awarded?", kairos.ToolInvocation{TriggerMessage: "see http://facts.example/halvard please"})
	if !strings.Contains(m["answer"].(string), "1962") {
		t.Fatalf("the user's URL was not read: %v", m["answer"])
	}
	r.web.page("facts.example/halvard2", "<p>The Halvard Medal was first awarded in 1970.</p>")
	_, m = call("When was the Halvard Medal first awarded?", kairos.ToolInvocation{TriggerMessage: "see http://facts.example/halvard2", Tainted: true})
	if m["abstained"] != true || r.web.hitsOn("facts.example") != 1 {
		t.Fatalf("a URL from a tainted turn was read: %v (hits %d)", m["answer"], r.web.hitsOn("facts.example"))
	}
	r.pol.Research.Enabled = false
	inv := &kairos.ToolInvocation{Arguments: json.RawMessage(`{"question": "x"}`), UserKey: user}
	if _, err := r.eng.Tool().Call(context.Background(), inv); kairos.ErrorCode(err) != kairos.EFORBIDDEN {
		t.Fatalf("disabled research: %v", err)
	}
}
