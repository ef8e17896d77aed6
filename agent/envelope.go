package agent

// Capability envelopes (seed 002's five peripherals) over Kairos's tool
// actions, and the hop protocol between them. Pure functions and fresh
// values: nothing here keeps state or does I/O.
//
// The seed's peripherals were written for a coding agent (read, edit,
// bash, git push). Kairos maps them onto its own actions:
//
//	envelope  actions                                              usable in
//	explore   search, memory.recall, memory.list,                  DISCUSS, DIAGNOSE, EXECUTE
//	          code.execute (no network writes), code.status,
//	          schedule.list/create/cancel (create and cancel are
//	          impactful: approval applies), mcp.read,
//	          skill.list, skill.test, skill.run (a skill__<name> call)
//	edit      memory.store, memory.forget, memory.recall,          DIAGNOSE, EXECUTE
//	          memory.list, schedule.list/create/cancel,
//	          mcp.read, mcp.write (impactful: approval applies)
//	test      code.execute, code.generate, code.status,            DIAGNOSE, EXECUTE
//	          skill.list/test/run, skill.create/update/rollback
//	          (seed 004's BUILD and UPDATE: always approved)
//	deploy    code.execute, code.status, code.network_write        EXECUTE
//	reflect   memory.recall, memory.list, memory.store             DISCUSS, DIAGNOSE, EXECUTE
//	          (store "summaries" only)
//
// "code.network_write" is not a tool action but the capability of a code
// cell to write to the network (POST/PUT/…, postJSON): only deploy has it,
// so it exists only in EXECUTE. Approvals still apply on top of envelopes
// (an envelope says what may be offered, approvals say what needs a yes).
//
// Entry and exit conditions keep the seed's names. The hop table is
// derived from them, not written separately:
//
//   - The current envelope must let the thread out towards the target: its
//     exit set holds "hop-<target>", or an exit condition that leads there
//     (explore's "ready-to-edit" → edit, reflect's "par-generated" →
//     explore), or the hop's reason is "user-request" and the exit set
//     holds it (explore only).
//   - The target's entry set must admit the hop by origin: "from-<current>",
//     "from-any", "default" (no envelope yet), or the hop's reason when it
//     is a request (user-request, agent-request, session-close).
//   - Entry conditions that are states rather than origins must hold:
//     deploy's "tests-passed" needs Context["tests"] == "pass".
//   - With HopRequest.Mode set, the target must be usable in that mode.
//
// The result (without a request reason):
//
//	explore → edit, reflect
//	edit    → test, reflect
//	test    → edit, deploy (tests passed), reflect
//	deploy  → reflect
//	reflect → explore
//	(none)  → explore
//
// plus, on a user request: explore → test; (none) → edit, test, reflect;
// and reflect on an agent request or session close from none.
//
// One deviation from the seed: edit's entry set gains "from-test". The
// seed's test envelope exits through "hop-edit" but its edit envelope only
// admits "from-explore" and "user-request", which would make the ordinary
// fix-and-retest loop need a user request every time.
//
// A hop never changes the session: the result carries the request's
// SessionID, and a Context "session_id" that differs from it is refused.
// When the mode changes (reset, timeout), FitEnvelope puts the thread back
// in a usable envelope; that is a restart through "default", not a hop.

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// EnvelopeID names a capability envelope.
type EnvelopeID string

// The five envelopes (seed 002's peripherals).
const (
	EnvExplore EnvelopeID = "explore"
	EnvEdit    EnvelopeID = "edit"
	EnvTest    EnvelopeID = "test"
	EnvDeploy  EnvelopeID = "deploy"
	EnvReflect EnvelopeID = "reflect"
)

// EnvelopeIDs lists the envelopes.
var EnvelopeIDs = []EnvelopeID{EnvExplore, EnvEdit, EnvTest, EnvDeploy, EnvReflect}

// DefaultEnvelope is where a thread starts (entry condition "default").
const DefaultEnvelope = EnvExplore

// Action names, as kairos.ToolAction.Name and policy approvals use them
// (the root package holds the one list).
const (
	ActionSearch           = kairos.ActionSearch
	ActionMemoryStore      = kairos.ActionMemoryStore
	ActionMemoryRecall     = kairos.ActionMemoryRecall
	ActionMemoryList       = kairos.ActionMemoryList
	ActionMemoryForget     = kairos.ActionMemoryForget
	ActionCodeExecute      = kairos.ActionCodeExecute
	ActionCodeGenerate     = kairos.ActionCodeGenerate
	ActionCodeStatus       = kairos.ActionCodeStatus
	ActionCodeNetworkWrite = kairos.ActionCodeNetworkWrite
	ActionCodeSecrets      = kairos.ActionCodeSecrets
)

// Actions lists every action an envelope can grant.
var Actions = kairos.Actions

// Hop context keys.
const (
	ContextSessionID = "session_id" // set on every HopResult.Context
	ContextTests     = "tests"      // "pass" satisfies deploy's "tests-passed"
)

// Envelope is a capability envelope. Values returned by this package are
// fresh copies: changing one changes nothing else.
type Envelope struct {
	ID      EnvelopeID
	Actions map[string]bool // what the model may be offered inside it
	Entry   map[string]bool // entry conditions (seed 002 names)
	Exit    map[string]bool // exit conditions (seed 002 names)
	Scope   string          // what it may touch, in words
	// MemoryStores limits memory.store to these stores (nil: any store).
	MemoryStores map[string]bool
}

// Allows reports whether the envelope grants the action.
func (e Envelope) Allows(action string) bool { return e.Actions[action] }

// AllowsStore reports whether memory.store may write to the store
// (kairos.StoreUserMemory, kairos.StoreSummaries) inside the envelope.
func (e Envelope) AllowsStore(store string) bool {
	if !e.Actions[ActionMemoryStore] {
		return false
	}
	return e.MemoryStores == nil || e.MemoryStores[store]
}

func envelopeDef(id EnvelopeID) (Envelope, bool) {
	switch id {
	case EnvExplore:
		return Envelope{
			ID: EnvExplore,
			Actions: setOf(ActionSearch, ActionMemoryRecall, ActionMemoryList, ActionCodeExecute, ActionCodeStatus,
				kairos.ActionScheduleList, kairos.ActionScheduleCreate, kairos.ActionScheduleCancel, kairos.ActionMCPRead,
				kairos.ActionSkillList, kairos.ActionSkillTest, kairos.ActionSkillRun, kairos.ActionResearch),
			Entry: setOf("default", "from-reflect"),
			Exit:  setOf("found-target", "ready-to-edit", "user-request", "hop-reflect"),
			Scope: "read-only: web search, memory look-ups, code cells without network writes",
		}, true
	case EnvEdit:
		return Envelope{
			ID: EnvEdit,
			Actions: setOf(ActionMemoryStore, ActionMemoryForget, ActionMemoryRecall, ActionMemoryList,
				kairos.ActionScheduleList, kairos.ActionScheduleCreate, kairos.ActionScheduleCancel,
				kairos.ActionMCPRead, kairos.ActionMCPWrite),
			Entry: setOf("from-explore", "from-test", "user-request"),
			Exit:  setOf("tests-pass", "ready-to-commit", "blocked", "hop-test", "hop-reflect"),
			Scope: "the user's memory: store and forget",
		}, true
	case EnvTest:
		return Envelope{
			ID: EnvTest,
			Actions: setOf(ActionCodeExecute, ActionCodeGenerate, ActionCodeStatus, ActionCodeSecrets,
				kairos.ActionSkillList, kairos.ActionSkillTest, kairos.ActionSkillCreate, kairos.ActionSkillUpdate,
				kairos.ActionSkillRollback, kairos.ActionSkillRun),
			Entry: setOf("from-edit", "user-request"),
			Exit:  setOf("pass", "fail", "flaky", "hop-edit", "hop-deploy", "hop-reflect"),
			Scope: "sandboxed code cells without network writes",
		}, true
	case EnvDeploy:
		return Envelope{
			ID:      EnvDeploy,
			Actions: setOf(ActionCodeExecute, ActionCodeStatus, ActionCodeNetworkWrite, ActionCodeSecrets),
			Entry:   setOf("from-test", "tests-passed"),
			Exit:    setOf("deployed", "blocked", "hop-reflect"),
			Scope:   "external effects: code cells that write to the network (EXECUTE only, approvals apply)",
		}, true
	case EnvReflect:
		return Envelope{
			ID:           EnvReflect,
			Actions:      setOf(ActionMemoryRecall, ActionMemoryList, ActionMemoryStore),
			Entry:        setOf("session-close", "user-request", "agent-request", "from-any"),
			Exit:         setOf("par-generated"),
			Scope:        "summaries: read memories, store summaries only",
			MemoryStores: setOf(kairos.StoreSummaries),
		}, true
	}
	return Envelope{}, false
}

// Envelopes returns the five envelopes (fresh copies), in EnvelopeIDs order.
func Envelopes() []Envelope {
	out := make([]Envelope, len(EnvelopeIDs))
	for i, id := range EnvelopeIDs {
		out[i], _ = envelopeDef(id)
	}
	return out
}

// LookupEnvelope returns the envelope with the id (EINVALID when unknown).
func LookupEnvelope(id EnvelopeID) (Envelope, error) {
	e, ok := envelopeDef(id)
	if !ok {
		return Envelope{}, kairos.Errorf(kairos.EINVALID, "unknown envelope %q (explore, edit, test, deploy, reflect)", string(id))
	}
	return e, nil
}

// EnvelopesForMode lists the envelopes usable in a mode: DISCUSS explore
// and reflect; DIAGNOSE adds edit (remembering is what a personal assistant
// is asked for most; forget stays behind an approval as an impactful
// action) and test; EXECUTE adds deploy. An unknown
// mode has none.
func EnvelopesForMode(mode Mode) []EnvelopeID {
	switch mode {
	case ModeDiscuss:
		return []EnvelopeID{EnvExplore, EnvReflect}
	case ModeDiagnose:
		return []EnvelopeID{EnvExplore, EnvEdit, EnvTest, EnvReflect}
	case ModeExecute:
		return []EnvelopeID{EnvExplore, EnvEdit, EnvTest, EnvDeploy, EnvReflect}
	}
	return nil
}

// UsableIn reports whether the envelope may be used in the mode.
func UsableIn(mode Mode, id EnvelopeID) bool {
	return slices.Contains(EnvelopesForMode(mode), id)
}

// AllowedActions is the set of actions the model may be offered in the
// envelope under the mode: the envelope's actions when it is usable in the
// mode, else none (an empty, non-nil map). The loop further removes what
// the policy's features disable.
func AllowedActions(mode Mode, env EnvelopeID) map[string]bool {
	out := map[string]bool{}
	e, ok := envelopeDef(env)
	if !ok || !UsableIn(mode, env) {
		return out
	}
	for a := range e.Actions {
		out[a] = true
	}
	return out
}

// OfferedTools groups allowed actions by model-facing tool: "search" →
// [] (offered, no sub-actions), "code" → ["execute", "status"], "memory" →
// ["list", "recall"], sorted. A tool with no allowed action is absent.
// code.network_write is a capability, not a tool action, and is left out.
func OfferedTools(allowed map[string]bool) map[string][]string {
	out := map[string][]string{}
	for a, ok := range allowed {
		if !ok || a == ActionCodeNetworkWrite {
			continue
		}
		tool, sub, found := strings.Cut(a, ".")
		if !found {
			if _, seen := out[tool]; !seen {
				out[tool] = []string{}
			}
			continue
		}
		out[tool] = append(out[tool], sub)
	}
	for _, subs := range out {
		sort.Strings(subs)
	}
	return out
}

// FitEnvelope returns cur when it is usable in mode, else DefaultEnvelope.
// Use it after a mode change (a reset from EXECUTE leaves deploy for
// explore); it is a restart through "default", not a hop.
func FitEnvelope(mode Mode, cur EnvelopeID) EnvelopeID {
	if UsableIn(mode, cur) {
		return cur
	}
	return DefaultEnvelope
}

// HopRequest asks to move from the current envelope to another.
type HopRequest struct {
	To        EnvelopeID
	Reason    string            // an exit/entry condition: "user-request", "agent-request", "session-close", "pass", …
	SessionID string            // required; the hop keeps it
	Context   map[string]string // carried to the target ("tests": "pass", "target": …)
	Mode      Mode              // when set, the target must be usable in this mode
	At        time.Time         // copied to the result
}

// HopResult is an accepted hop.
type HopResult struct {
	From      EnvelopeID // "" when the thread had no envelope
	To        EnvelopeID
	SessionID string
	At        time.Time
	Success   bool
	Context   map[string]string // the request's context plus session_id
}

// requestReasons are hop reasons that stand for an explicit request and
// may satisfy an entry condition of the same name.
var requestReasons = setOf("user-request", "agent-request", "session-close")

// exitLeadsTo maps exit conditions that name no "hop-" to where they lead.
var exitLeadsTo = map[string]EnvelopeID{
	"ready-to-edit": EnvEdit,
	"par-generated": EnvExplore,
}

// stateConditions are entry conditions that must hold (rather than name
// an origin), with how to check them.
var stateConditions = map[string]func(ctx map[string]string) bool{
	"tests-passed": func(ctx map[string]string) bool { return ctx[ContextTests] == "pass" },
}

// Hop validates a move from cur (the zero Envelope when the thread has
// none yet) to req.To under the derived hop table (see the top of this
// file). Errors are *kairos.Error: EINVALID for a malformed request
// (unknown target, no session id, a context that changes the session,
// a hop to the same envelope), EFORBIDDEN for a hop the envelopes or the
// mode do not allow. The result keeps req.SessionID.
func Hop(cur Envelope, req HopRequest) (HopResult, error) {
	to, ok := envelopeDef(req.To)
	if !ok {
		return HopResult{}, kairos.Errorf(kairos.EINVALID, "hop: unknown envelope %q", string(req.To))
	}
	if strings.TrimSpace(req.SessionID) == "" {
		return HopResult{}, kairos.Errorf(kairos.EINVALID, "hop: a session id is required")
	}
	if sid, set := req.Context[ContextSessionID]; set && sid != req.SessionID {
		return HopResult{}, kairos.Errorf(kairos.EINVALID, "hop: a hop cannot change the session (%q in context, %q requested)", sid, req.SessionID)
	}
	if cur.ID != "" {
		if _, known := envelopeDef(cur.ID); !known {
			return HopResult{}, kairos.Errorf(kairos.EINVALID, "hop: unknown current envelope %q", string(cur.ID))
		}
	}
	if cur.ID == req.To {
		return HopResult{}, kairos.Errorf(kairos.EINVALID, "hop: already in %s", req.To)
	}
	if req.Mode != "" && !UsableIn(req.Mode, req.To) {
		return HopResult{}, kairos.Errorf(kairos.EFORBIDDEN, "hop: %s is not usable in %s mode (usable: %s)", req.To, req.Mode, joinIDs(EnvelopesForMode(req.Mode)))
	}
	if cur.ID != "" && !exitAllows(cur, req) {
		return HopResult{}, kairos.Errorf(kairos.EFORBIDDEN, "hop: %s cannot exit to %s (exits: %s)", cur.ID, req.To, joinSet(cur.Exit))
	}
	if !entryAdmits(to, cur.ID, req) {
		return HopResult{}, kairos.Errorf(kairos.EFORBIDDEN, "hop: %s does not admit a hop from %s (entry: %s)", req.To, orNone(cur.ID), joinSet(to.Entry))
	}
	for cond := range to.Entry {
		if check, isState := stateConditions[cond]; isState && !check(req.Context) {
			return HopResult{}, kairos.Errorf(kairos.EFORBIDDEN, "hop: %s needs %s (context %s=pass)", req.To, cond, ContextTests)
		}
	}
	ctx := make(map[string]string, len(req.Context)+1)
	for k, v := range req.Context {
		ctx[k] = v
	}
	ctx[ContextSessionID] = req.SessionID
	return HopResult{From: cur.ID, To: req.To, SessionID: req.SessionID, At: req.At, Success: true, Context: ctx}, nil
}

func exitAllows(cur Envelope, req HopRequest) bool {
	if cur.Exit["hop-"+string(req.To)] {
		return true
	}
	for cond := range cur.Exit {
		if exitLeadsTo[cond] == req.To {
			return true
		}
	}
	return req.Reason == "user-request" && cur.Exit["user-request"]
}

func entryAdmits(to Envelope, from EnvelopeID, req HopRequest) bool {
	switch {
	case from == "" && to.Entry["default"]:
		return true
	case from != "" && (to.Entry["from-"+string(from)] || to.Entry["from-any"]):
		return true
	case requestReasons[req.Reason] && to.Entry[req.Reason]:
		return true
	}
	return false
}

func joinSet(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func joinIDs(ids []EnvelopeID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

func orNone(id EnvelopeID) string {
	if id == "" {
		return "no envelope"
	}
	return string(id)
}
