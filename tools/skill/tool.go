package skill

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// Actions of the `skill` tool.
const (
	ActCreate   = "create"
	ActUpdate   = "update"
	ActList     = "list"
	ActShow     = "show"
	ActTest     = "test"
	ActRollback = "rollback"
)

var actions = []string{ActCreate, ActUpdate, ActList, ActShow, ActTest, ActRollback}

// Tool is the `skill` tool.
type Tool struct{ s *Skills }

var _ kairos.Tool = (*Tool)(nil)

// Tool returns the `skill` tool.
func (s *Skills) Tool() *Tool { return &Tool{s: s} }

const toolSchema = `{"type":"object","properties":{
"action":{"type":"string","enum":["create","update","list","show","test","rollback"]},
"name":{"type":"string","description":"lower_snake_case"},
"description":{"type":"string","description":"one line: what it does"},
"code":{"type":"string","description":"JavaScript defining (async) function run(input) that returns the result"},
"input_schema":{"type":"object","description":"JSON Schema of input"},
"tests":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"input":{},"expect":{"description":"expected result, or {\"$predicate\":\"JS expression over result\"}"}},"required":["input","expect"]}},
"capabilities":{"type":"object","properties":{"hosts":{"type":"array","items":{"type":"string"}},"secrets":{"type":"array","items":{"type":"string"}}}},
"version":{"type":"integer","minimum":1}},
"required":["action"]}`

// Spec implements kairos.Tool.
func (t *Tool) Spec() kairos.ToolSpec {
	return kairos.ToolSpec{Name: "skill", Description: "Your own reusable tools. create: a new skill (capabilities {hosts, secrets} " +
		"only if it needs the network or secrets); its tests run in the sandbox first, then a human approves; it is then the " +
		"tool skill__<name>. update: a new version (shown as a diff; its tests and the kept old ones must pass). rollback: to " +
		"a kept `version`. test: run a skill's tests, or given code+tests. list/show: your skills; any skill__<name> can be " +
		"called, offered or not.",
		Parameters: toolutil.Schema(toolSchema)}
}

// cues are the words that offer the skill tool to a turn (tools.Offered);
// without them it is reachable with more_tools.
var cues = []string{"skill", "tool", "automat", "reusabl", "rollback"}

// CuedBy implements tools.Offered's on-demand offer.
func (t *Tool) CuedBy(m tools.Message) bool { return tools.HasCue(m.Words, cues) }

// args are the tool's arguments.
type args struct {
	Action       string                    `json:"action"`
	Name         string                    `json:"name"`
	Description  *string                   `json:"description"`
	Code         *string                   `json:"code"`
	InputSchema  json.RawMessage           `json:"input_schema"`
	Tests        []kairos.SkillTest        `json:"tests"`
	Capabilities *kairos.SkillCapabilities `json:"capabilities"`
	Version      toolutil.Int              `json:"version"`
}

func parse(raw json.RawMessage) (*args, error) {
	var a args
	if err := toolutil.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	a.Action = strings.TrimSpace(a.Action)
	a.Name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(a.Name), kairos.SkillToolPrefix))
	if err := toolutil.OneOf("action", a.Action, actions...); err != nil {
		return nil, err
	}
	if a.Action != ActList && a.Action != ActTest && a.Name == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"name\" is required for %s", a.Action)
	}
	if a.Name != "" && !kairos.ValidSkillName(a.Name) {
		return nil, kairos.Errorf(kairos.EINVALID, "argument \"name\": %q is not a skill name (lower_snake_case, a letter first, at most 40, no double underscore)", a.Name)
	}
	return &a, nil
}

// Action implements kairos.Tool. create, update and rollback prepare
// everything (validation, the tests in the sandbox, the risk, the detail
// to approve) and always ask; a create or update whose tests fail is the
// action skill.test instead, which asks nobody, and its call returns the
// results.
func (t *Tool) Action(ctx context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	a, err := parse(inv.Arguments)
	if err != nil {
		return kairos.ToolAction{}, err
	}
	switch a.Action {
	case ActList, ActShow:
		return kairos.ToolAction{Name: kairos.ActionSkillList, Capability: kairos.CapSkill}, nil
	case ActTest:
		return kairos.ToolAction{Name: kairos.ActionSkillTest, Capability: kairos.CapSkill}, nil
	}
	pr, err := t.s.prepare(ctx, inv, a)
	if err != nil {
		return kairos.ToolAction{}, err
	}
	return pr.action(), nil
}

// Call implements kairos.Tool.
func (t *Tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	a, err := parse(inv.Arguments)
	if err != nil {
		return nil, err
	}
	if !t.s.pol().Features.SelfUpdate {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "skills are switched off (features.self_update)")
	}
	var r *response
	switch a.Action {
	case ActList:
		r, err = t.s.listFor(ctx, inv.UserKey)
	case ActShow:
		r, err = t.s.show(ctx, inv.UserKey, a.Name)
	case ActTest:
		r, err = t.s.test(ctx, inv, a)
	default:
		r, err = t.s.commit(ctx, inv, a)
	}
	if err != nil {
		return nil, err
	}
	// Test outputs that read the network, or words of a skill the user
	// cannot trust, are untrusted content: fenced, tainting the turn.
	return toolutil.Result(r, r.untrusted)
}

// response is the tool's answer (../shared/CONTRACT.md).
type response struct {
	Success     bool                     `json:"success"`
	Skill       *skillView               `json:"skill,omitempty"`
	Skills      []skillView              `json:"skills,omitempty"`
	TestResults []kairos.SkillTestResult `json:"test_results,omitempty"`
	Diff        string                   `json:"diff,omitempty"`
	Error       string                   `json:"error,omitempty"`
	Note        string                   `json:"note,omitempty"`
	untrusted   bool                     // holds untrusted content (Tool.Call)
}

// skillView is a skill as the model reads it.
type skillView struct {
	Name         string                    `json:"name"`
	Version      int                       `json:"version"`
	Description  string                    `json:"description"`
	Scope        string                    `json:"scope,omitempty"`
	Enabled      *bool                     `json:"enabled,omitempty"`
	Tainted      bool                      `json:"tainted,omitempty"`
	InputSchema  json.RawMessage           `json:"input_schema,omitempty"`
	Code         string                    `json:"code,omitempty"`
	Tests        []kairos.SkillTest        `json:"tests,omitempty"`
	Capabilities *kairos.SkillCapabilities `json:"capabilities,omitempty"`
	Risk         []string                  `json:"risk,omitempty"`
	Versions     []int                     `json:"versions,omitempty"`
}

func view(sk *kairos.Skill) skillView {
	v := skillView{Name: sk.Name, Version: sk.Version, Scope: sk.Scope, Tainted: sk.Tainted}
	if sk.Current != nil {
		v.Description = sk.Current.Description
	}
	if !sk.Enabled {
		f := false
		v.Enabled = &f
	}
	return v
}

func (s *Skills) listFor(ctx context.Context, owner string) (*response, error) {
	list, err := s.cfg.Store.Skills(ctx, kairos.SkillFilter{Owner: owner, WithShared: true})
	if err != nil {
		return nil, err
	}
	r := &response{Success: true, Skills: []skillView{}}
	for _, sk := range list {
		r.Skills = append(r.Skills, view(sk))
		r.untrusted = r.untrusted || untrustedBy(sk, owner) != ""
	}
	return r, nil
}

func (s *Skills) show(ctx context.Context, owner, name string) (*response, error) {
	sk, err := s.cfg.Store.FindSkill(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	v := view(sk)
	if c := sk.Current; c != nil {
		v.InputSchema, v.Code, v.Tests, v.Capabilities, v.Risk = c.InputSchema, c.Code, c.Tests, &c.Capabilities, c.Risk
	}
	vs, err := s.cfg.Store.SkillVersions(ctx, sk.ID)
	if err != nil {
		return nil, err
	}
	for _, x := range vs {
		v.Versions = append(v.Versions, x.Version)
	}
	return &response{Success: true, Skill: &v, untrusted: untrustedBy(sk, owner) != ""}, nil
}
