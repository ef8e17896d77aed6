package agent

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kairos-agent/kairos"
)

func TestEnvelopeActions(t *testing.T) {
	want := map[EnvelopeID][]string{
		EnvExplore: {"code.execute", "code.status", "mcp.read", "memory.list", "memory.recall", "research", "schedule.cancel", "schedule.create", "schedule.list", "search",
			"skill.list", "skill.run", "skill.test"},
		EnvEdit: {"mcp.read", "mcp.write", "memory.forget", "memory.list", "memory.recall", "memory.store", "schedule.cancel", "schedule.create", "schedule.list"},
		EnvTest: {"code.execute", "code.generate", "code.secrets", "code.status",
			"skill.create", "skill.list", "skill.rollback", "skill.run", "skill.test", "skill.update"},
		EnvDeploy:  {"code.execute", "code.network_write", "code.secrets", "code.status"},
		EnvReflect: {"memory.list", "memory.recall", "memory.store"},
	}
	envs := Envelopes()
	if len(envs) != 5 {
		t.Fatalf("%d envelopes", len(envs))
	}
	for _, e := range envs {
		var got []string
		for a := range e.Actions {
			got = append(got, a)
			if !slices.Contains(Actions, a) {
				t.Errorf("%s grants unknown action %q", e.ID, a)
			}
		}
		sort.Strings(got)
		if diff := cmp.Diff(want[e.ID], got); diff != "" {
			t.Errorf("%s actions (-want +got):\n%s", e.ID, diff)
		}
		for _, a := range Actions {
			if e.Allows(a) != slices.Contains(want[e.ID], a) {
				t.Errorf("%s.Allows(%s) = %v", e.ID, a, e.Allows(a))
			}
		}
		if len(e.Entry) == 0 || len(e.Exit) == 0 || e.Scope == "" {
			t.Errorf("%s lacks entry/exit/scope", e.ID)
		}
	}
	// Only deploy may write to the network; explore and test run code
	// without it.
	for _, e := range envs {
		if e.Allows(ActionCodeNetworkWrite) != (e.ID == EnvDeploy) {
			t.Errorf("%s network write = %v", e.ID, e.Allows(ActionCodeNetworkWrite))
		}
	}
	// Reflect stores summaries only; edit any store; explore none.
	refl, _ := LookupEnvelope(EnvReflect)
	edit, _ := LookupEnvelope(EnvEdit)
	expl, _ := LookupEnvelope(EnvExplore)
	if !refl.AllowsStore(kairos.StoreSummaries) || refl.AllowsStore(kairos.StoreUserMemory) {
		t.Error("reflect store scope")
	}
	if !edit.AllowsStore(kairos.StoreUserMemory) || !edit.AllowsStore(kairos.StoreSummaries) {
		t.Error("edit store scope")
	}
	if expl.AllowsStore(kairos.StoreSummaries) {
		t.Error("explore may store")
	}
	// Copies are independent.
	expl.Actions[ActionMemoryForget] = true
	again, _ := LookupEnvelope(EnvExplore)
	if again.Allows(ActionMemoryForget) {
		t.Error("changing a returned envelope changed the definition")
	}
	if _, err := LookupEnvelope("shell"); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("LookupEnvelope(shell) = %v", err)
	}
}

func TestEnvelopesForMode(t *testing.T) {
	want := map[Mode][]EnvelopeID{
		ModeDiscuss:  {EnvExplore, EnvReflect},
		ModeDiagnose: {EnvExplore, EnvEdit, EnvTest, EnvReflect},
		ModeExecute:  {EnvExplore, EnvEdit, EnvTest, EnvDeploy, EnvReflect},
		"":           nil,
	}
	for mode, ids := range want {
		if diff := cmp.Diff(ids, EnvelopesForMode(mode)); diff != "" {
			t.Errorf("EnvelopesForMode(%q) (-want +got):\n%s", mode, diff)
		}
	}
}

// TestAllowedActions: every mode × envelope pair, and the mode-level
// guarantees the loop relies on.
func TestAllowedActions(t *testing.T) {
	for _, mode := range Modes {
		for _, id := range EnvelopeIDs {
			got := AllowedActions(mode, id)
			if got == nil {
				t.Fatalf("nil map for %s/%s", mode, id)
			}
			e, _ := LookupEnvelope(id)
			if UsableIn(mode, id) {
				if diff := cmp.Diff(e.Actions, got); diff != "" {
					t.Errorf("%s/%s (-envelope +allowed):\n%s", mode, id, diff)
				}
			} else if len(got) != 0 {
				t.Errorf("%s/%s: unusable envelope allows %v", mode, id, got)
			}
			// memory.forget is reachable from DIAGNOSE (edit) but is
			// impactful, so it always needs a human's approval.
			if mode != ModeExecute && got[ActionCodeNetworkWrite] {
				t.Errorf("%s/%s allows an EXECUTE-only action: %v", mode, id, got)
			}
			if mode == ModeDiscuss && got[ActionCodeGenerate] {
				t.Errorf("DISCUSS/%s allows code.generate", id)
			}
		}
	}
	if len(AllowedActions(ModeExecute, "shell")) != 0 || len(AllowedActions("PANIC", EnvExplore)) != 0 {
		t.Error("unknown envelope or mode allows actions")
	}
}

func TestOfferedTools(t *testing.T) {
	tests := []struct {
		mode Mode
		env  EnvelopeID
		want map[string][]string
	}{
		{ModeDiscuss, EnvExplore, map[string][]string{"search": {}, "code": {"execute", "status"}, "memory": {"list", "recall"},
			"schedule": {"cancel", "create", "list"}, "mcp": {"read"}, "skill": {"list", "run", "test"}, "research": {}}},
		{ModeDiscuss, EnvReflect, map[string][]string{"memory": {"list", "recall", "store"}}},
		{ModeDiagnose, EnvTest, map[string][]string{"code": {"execute", "generate", "secrets", "status"},
			"skill": {"create", "list", "rollback", "run", "test", "update"}}},
		{ModeExecute, EnvEdit, map[string][]string{"memory": {"forget", "list", "recall", "store"}, "schedule": {"cancel", "create", "list"},
			"mcp": {"read", "write"}}},
		{ModeExecute, EnvDeploy, map[string][]string{"code": {"execute", "secrets", "status"}}},
		{ModeDiscuss, EnvDeploy, map[string][]string{}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, OfferedTools(AllowedActions(tc.mode, tc.env))); diff != "" {
			t.Errorf("%s/%s (-want +got):\n%s", tc.mode, tc.env, diff)
		}
	}
}

func TestFitEnvelope(t *testing.T) {
	tests := []struct {
		mode      Mode
		cur, want EnvelopeID
	}{
		{ModeDiscuss, EnvDeploy, EnvExplore},
		{ModeDiscuss, EnvEdit, EnvExplore},
		{ModeDiscuss, EnvReflect, EnvReflect},
		{ModeDiagnose, EnvTest, EnvTest},
		{ModeExecute, EnvDeploy, EnvDeploy},
		{ModeExecute, "", EnvExplore},
	}
	for _, tc := range tests {
		if got := FitEnvelope(tc.mode, tc.cur); got != tc.want {
			t.Errorf("FitEnvelope(%s, %q) = %s, want %s", tc.mode, tc.cur, got, tc.want)
		}
	}
}

// TestHopTable tries every from → to pair (from "" is a thread with no
// envelope yet) under each kind of reason and context, against the table
// derived in envelope.go's comment.
func TestHopTable(t *testing.T) {
	base := []string{ // no reason, no context
		">explore",
		"explore>edit", "explore>reflect",
		"edit>test", "edit>reflect",
		"test>edit", "test>reflect",
		"deploy>reflect",
		"reflect>explore",
	}
	scenarios := []struct {
		name    string
		reason  string
		ctx     map[string]string
		allowed []string
	}{
		{"no reason", "", nil, base},
		{"tests passed", "pass", map[string]string{ContextTests: "pass"}, append(slices.Clone(base), "test>deploy")},
		{"tests failed", "fail", map[string]string{ContextTests: "fail"}, base},
		{"user request", "user-request", nil, append(slices.Clone(base), ">edit", ">test", ">reflect", "explore>test")},
		{"agent request", "agent-request", nil, append(slices.Clone(base), ">reflect")},
		{"session close", "session-close", nil, append(slices.Clone(base), ">reflect")},
	}
	froms := append([]EnvelopeID{""}, EnvelopeIDs...)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, sc := range scenarios {
		for _, from := range froms {
			for _, to := range EnvelopeIDs {
				key := string(from) + ">" + string(to)
				t.Run(sc.name+"/"+key, func(t *testing.T) {
					var cur Envelope
					if from != "" {
						cur, _ = LookupEnvelope(from)
					}
					res, err := Hop(cur, HopRequest{To: to, Reason: sc.reason, SessionID: "s-1", Context: sc.ctx, At: at})
					want := slices.Contains(sc.allowed, key)
					if (err == nil) != want {
						t.Fatalf("Hop %s: err %v, want allowed=%v", key, err, want)
					}
					if err != nil {
						code := kairos.ErrorCode(err)
						if from == to && code != kairos.EINVALID || from != to && code != kairos.EFORBIDDEN {
							t.Errorf("code %s for %s: %v", code, key, err)
						}
						return
					}
					if !res.Success || res.From != from || res.To != to || res.SessionID != "s-1" || !res.At.Equal(at) {
						t.Errorf("result %+v", res)
					}
					if res.Context[ContextSessionID] != "s-1" {
						t.Errorf("context lost the session: %v", res.Context)
					}
					for k, v := range sc.ctx {
						if res.Context[k] != v {
							t.Errorf("context %s not carried: %v", k, res.Context)
						}
					}
				})
			}
		}
	}
}

func TestHopKeepsSessionAcrossAChain(t *testing.T) {
	cur := Envelope{}
	ctx := map[string]string{"target": "notes"}
	for _, step := range []struct {
		to     EnvelopeID
		reason string
	}{{EnvExplore, ""}, {EnvEdit, "ready-to-edit"}, {EnvTest, ""}, {EnvEdit, "fail"}, {EnvTest, ""}, {EnvDeploy, "pass"}, {EnvReflect, "deployed"}, {EnvExplore, "par-generated"}} {
		if step.reason == "pass" {
			ctx[ContextTests] = "pass"
		}
		res, err := Hop(cur, HopRequest{To: step.to, Reason: step.reason, SessionID: "sess-9", Context: ctx, Mode: ModeExecute})
		if err != nil {
			t.Fatalf("hop to %s: %v", step.to, err)
		}
		if res.SessionID != "sess-9" || res.Context[ContextSessionID] != "sess-9" || res.Context["target"] != "notes" {
			t.Fatalf("hop to %s lost the session or context: %+v", step.to, res)
		}
		ctx = res.Context
		cur, _ = LookupEnvelope(res.To)
	}
}

func TestHopRefusals(t *testing.T) {
	explore, _ := LookupEnvelope(EnvExplore)
	test, _ := LookupEnvelope(EnvTest)
	tests := []struct {
		name string
		cur  Envelope
		req  HopRequest
		code string
		msg  string
	}{
		{"unknown target", explore, HopRequest{To: "shell", SessionID: "s"}, kairos.EINVALID, `unknown envelope "shell"`},
		{"no session", explore, HopRequest{To: EnvEdit}, kairos.EINVALID, "session id is required"},
		{"context changes the session", explore, HopRequest{To: EnvEdit, SessionID: "s", Context: map[string]string{"session_id": "other"}}, kairos.EINVALID, "cannot change the session"},
		{"same envelope", explore, HopRequest{To: EnvExplore, SessionID: "s"}, kairos.EINVALID, "already in explore"},
		{"unknown current", Envelope{ID: "shell"}, HopRequest{To: EnvEdit, SessionID: "s"}, kairos.EINVALID, "unknown current envelope"},
		{"not usable in mode", explore, HopRequest{To: EnvEdit, SessionID: "s", Mode: ModeDiscuss}, kairos.EFORBIDDEN, "edit is not usable in DISCUSS mode (usable: explore, reflect)"},
		{"deploy from test in DIAGNOSE", test, HopRequest{To: EnvDeploy, SessionID: "s", Mode: ModeDiagnose, Context: map[string]string{"tests": "pass"}}, kairos.EFORBIDDEN, "not usable in DIAGNOSE"},
		{"exit not allowed", explore, HopRequest{To: EnvDeploy, SessionID: "s"}, kairos.EFORBIDDEN, "explore cannot exit to deploy"},
		{"entry not admitted", Envelope{}, HopRequest{To: EnvEdit, SessionID: "s"}, kairos.EFORBIDDEN, "edit does not admit a hop from no envelope"},
		{"tests not passed", test, HopRequest{To: EnvDeploy, SessionID: "s"}, kairos.EFORBIDDEN, "deploy needs tests-passed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Hop(tc.cur, tc.req)
			if kairos.ErrorCode(err) != tc.code || !strings.Contains(kairos.ErrorMessage(err), tc.msg) {
				t.Errorf("Hop = %v, want %s containing %q", err, tc.code, tc.msg)
			}
		})
	}
}

func ExampleHop() {
	test, _ := LookupEnvelope(EnvTest)
	_, err := Hop(test, HopRequest{To: EnvDeploy, SessionID: "s-1"})
	fmt.Println(kairos.ErrorMessage(err))
	res, _ := Hop(test, HopRequest{To: EnvDeploy, SessionID: "s-1", Reason: "pass", Context: map[string]string{"tests": "pass"}})
	fmt.Println(res.From, "→", res.To, res.SessionID)
	fmt.Println(OfferedTools(AllowedActions(ModeExecute, res.To)))
	// Output:
	// hop: deploy needs tests-passed (context tests=pass)
	// test → deploy s-1
	// map[code:[execute secrets status]]
}
