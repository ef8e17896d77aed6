package skill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// runTool is skill__<name>: it runs the skill's current version.
type runTool struct {
	s    *Skills
	sk   *kairos.Skill // as listed; Call reads the current version again
	spec kairos.ToolSpec
}

var _ kairos.Tool = (*runTool)(nil)

// newRunTool is skill__<name> as offered to user. A description the user
// cannot trust (untrustedBy) is marked so: the agent fences it as data.
func newRunTool(s *Skills, sk *kairos.Skill, user string) *runTool {
	desc := kairos.Clip(sk.Current.Description, 120)
	var params bytes.Buffer
	if json.Compact(&params, sk.Current.InputSchema) != nil || params.Len() == 0 {
		params.Reset()
		params.WriteString(`{"type":"object"}`)
	}
	return &runTool{s: s, sk: sk, spec: kairos.ToolSpec{Name: kairos.SkillToolName(sk.Name), Description: desc,
		Parameters: json.RawMessage(params.Bytes()), Untrusted: untrustedBy(sk, user)}}
}

// untrustedBy names who wrote a skill's words when user cannot trust
// them ("" when user can): a skill made or changed while untrusted
// content was in the turn, or a shared skill of another owner (its
// description, code and tests are someone else's).
func untrustedBy(sk *kairos.Skill, user string) string {
	switch {
	case sk.Tainted:
		return "a skill made while untrusted content (" + orDefault(sk.TaintSource, "unknown") + ") was in view"
	case sk.Owner != user:
		return "a skill shared by another user"
	}
	return ""
}

// specTokens estimates what a skill's tool adds to a prompt.
func specTokens(sk *kairos.Skill) int {
	return estimateTokens(sk.Name+sk.Current.Description) + estimateTokens(string(sk.Current.InputSchema)) + 12
}

// Spec implements kairos.Tool.
func (t *runTool) Spec() kairos.ToolSpec { return t.spec }

// OfferedAction is the one action every call performs (the agent's mode
// gate offers the tool by it).
func (t *runTool) OfferedAction() string { return kairos.ActionSkillRun }

// Action implements kairos.Tool: skill.run, impactful when the skill may
// write to the network or reads secrets (as a code cell doing so is).
func (t *runTool) Action(ctx context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	if _, err := checkInput(inv.Arguments, t.sk.Current.InputSchema); err != nil {
		return kairos.ToolAction{}, err
	}
	// A standing grant names the version that will run now: an update
	// (approved since the list was made) needs its own grant.
	version := t.sk.Version
	if cur, err := t.s.cfg.Store.FindSkill(ctx, inv.UserKey, t.sk.Name); err == nil && cur.Current != nil {
		version = cur.Version
	}
	act := kairos.ToolAction{Name: kairos.ActionSkillRun, Capability: kairos.CapSkill,
		Summary: fmt.Sprintf("Run your skill %s (version %d) with the input below?", t.sk.Name, version),
		Target:  fmt.Sprintf("%s v%d", t.spec.Name, version), TargetLabel: fmt.Sprintf("running %s version %d with any input", t.sk.Name, version)}
	if t.sk.Owner != inv.UserKey {
		act.Summary = fmt.Sprintf("Run the shared skill %s (version %d) with the input below?", t.sk.Name, version)
	}
	var why []string
	if slices.Contains(t.sk.Current.Risk, kairos.RiskNetworkWrite) {
		why = append(why, "may send data to the network")
	}
	if slices.Contains(t.sk.Current.Risk, kairos.RiskSecrets) {
		why = append(why, "uses the secret(s) "+strings.Join(t.sk.Current.Capabilities.Secrets, ", "))
	}
	if len(why) > 0 {
		act.Impactful = true
		act.Reason = "the skill " + t.sk.Name + " " + strings.Join(why, " and ")
	}
	return act, nil
}

// runResult is what the model reads after a run.
type runResult struct {
	Success       bool            `json:"success"`
	Skill         string          `json:"skill"`
	Version       int             `json:"version"`
	Result        json.RawMessage `json:"result,omitempty"`
	Stdout        string          `json:"stdout,omitempty"`
	Error         string          `json:"error,omitempty"`
	ErrorCategory string          `json:"error_category,omitempty"`
	DurationMS    int64           `json:"duration_ms"`
	Note          string          `json:"note,omitempty"`
}

// Call implements kairos.Tool. It reads the current version when the call
// starts: an update approved meanwhile applies to the next call, and this
// one finishes on the version it read.
func (t *runTool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	s := t.s
	p := s.pol()
	if !p.Features.SelfUpdate {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "skills are switched off (features.self_update)")
	}
	sk, err := s.cfg.Store.FindSkill(ctx, inv.UserKey, t.sk.Name)
	if err != nil {
		return nil, err
	}
	if !sk.Enabled || sk.Current == nil {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "the skill %s is disabled (%s)", sk.Name, orDefault(sk.DisabledReason, "by its owner"))
	}
	input, err := checkInput(inv.Arguments, sk.Current.InputSchema)
	if err != nil {
		return nil, err
	}
	res, err := s.runCell(ctx, p, sk, input)
	if err != nil {
		return nil, err
	}
	out := runResult{Success: res.Success, Skill: sk.Name, Version: sk.Version, DurationMS: res.Duration.Milliseconds()}
	if res.Success {
		out.Result = clipJSON(res.Output, MaxResultBytes)
		if len(out.Result) == 0 {
			out.Result = json.RawMessage("null")
		}
		out.Stdout = kairos.Clip(res.Stdout, 1000)
	} else {
		out.Error, out.ErrorCategory = kairos.Clip(orDefault(res.Error, res.Stderr), 1000), res.ErrorCategory
	}
	disabled, rerr := s.cfg.Store.RecordSkillRun(ctx, sk.ID, res.Success, p.Skills.MaxFailures, s.cfg.Now())
	if rerr != nil {
		s.log.Warn("record skill run", "skill", sk.Name, "err", rerr)
	}
	if disabled {
		s.changed()
		out.Note = fmt.Sprintf("The skill failed %d runs in a row and is now disabled; its owner was told.", p.Skills.MaxFailures)
		s.tellOwner(ctx, sk, p.Skills.MaxFailures, out.Error)
	}
	s.trace(ctx, inv, sk, res)
	// A tainted skill's output, or what it read from the web, is untrusted.
	return toolutil.Result(out, sk.Tainted || len(sk.Current.Capabilities.Hosts) > 0)
}

// runCell runs one call of the skill's current version.
func (s *Skills) runCell(ctx context.Context, p *kairos.Policy, sk *kairos.Skill, input json.RawMessage) (*kairos.CellResult, error) {
	task, nonce := s.cellTask(p, sk.Current, input, false)
	start := time.Now()
	res, err := s.cfg.Runner.Run(ctx, task)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.log.Error("skill run failed in the sandbox", "skill", sk.Name, "err", s.red.Scrub(err.Error()))
		res = &kairos.CellResult{ErrorCategory: kairos.CatRuntime, Error: "the sandbox failed", ExitCode: -1}
	}
	if res.Duration <= 0 {
		res.Duration = time.Since(start)
	}
	res = s.scrub(res)
	settle(res, nonce)
	return res, nil
}

func (s *Skills) tellOwner(ctx context.Context, sk *kairos.Skill, n int, lastErr string) {
	if s.cfg.Notify == nil {
		return
	}
	text := fmt.Sprintf("Your skill *%s* failed %d runs in a row and is now disabled. Last error: %s\nSee /skills to roll it back or enable it again.",
		sk.Name, n, kairos.Clip(orDefault(lastErr, "unknown"), 300))
	s.cfg.Notify(context.WithoutCancel(ctx), sk.Owner, text)
}

// trace records the run as a code execution (seed 003's trace); the code
// is named, not copied: the version holds it.
func (s *Skills) trace(ctx context.Context, inv *kairos.ToolInvocation, sk *kairos.Skill, res *kairos.CellResult) {
	if s.cfg.Executions == nil {
		return
	}
	e := &kairos.CodeExecution{ID: kairos.NewID(), Code: fmt.Sprintf("// %s v%d", kairos.SkillToolName(sk.Name), sk.Version),
		Stdout: kairos.Clip(res.Stdout, 4000), Stderr: kairos.Clip(res.Stderr, 4000), ExitCode: res.ExitCode,
		DurationMS: res.Duration.Milliseconds(), Success: res.Success, SessionID: inv.SessionID, UserKey: inv.UserKey,
		TriggerMessage: s.red.Scrub(kairos.Clip(inv.TriggerMessage, 1000)), ErrorCategory: res.ErrorCategory,
		Verb: verb(sk.Current), Result: kairos.Clip(string(res.Output), 4000), CreatedAt: s.cfg.Now()}
	if !res.Success && e.ErrorCategory == "" {
		e.ErrorCategory = kairos.CatRuntime
	}
	if err := s.cfg.Executions.RecordExecution(context.WithoutCancel(ctx), e); err != nil {
		s.log.Warn("record skill execution", "err", err)
	}
}

// checkInput validates a call's arguments against the skill's input
// schema, shallowly: a JSON object, required properties present, each
// given property of the declared JSON type.
func checkInput(raw, schema json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if len(raw) > MaxInputBytes {
		return nil, kairos.Errorf(kairos.EINVALID, "the input is longer than %d bytes", MaxInputBytes)
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(raw, &in) != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "the input must be a JSON object")
	}
	var sc struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &sc)
	for _, r := range sc.Required {
		if _, ok := in[r]; !ok {
			return nil, kairos.Errorf(kairos.EINVALID, "argument %q is required", r)
		}
	}
	for k, v := range in {
		prop, ok := sc.Properties[k]
		if !ok {
			continue
		}
		if want, ok := prop.Type.(string); ok && !typeMatches(want, v) {
			return nil, kairos.Errorf(kairos.EINVALID, "argument %q must be of type %s", k, want)
		}
	}
	return raw, nil
}

func typeMatches(want string, v json.RawMessage) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	switch want {
	case "string":
		_, ok := x.(string)
		return ok
	case "number":
		_, ok := x.(float64)
		return ok
	case "integer":
		f, ok := x.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "null":
		return x == nil
	}
	return true
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
