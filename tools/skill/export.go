package skill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/kairos-agent/kairos"
)

// FileFormat is the version of an exported skill file.
const FileFormat = 1

// File is one exported skill: everything a create needs, as one JSON file.
type File struct {
	Format       int                      `json:"kairos_skill"`
	Name         string                   `json:"name"`
	Description  string                   `json:"description"`
	InputSchema  json.RawMessage          `json:"input_schema"`
	Code         string                   `json:"code"`
	Tests        []kairos.SkillTest       `json:"tests"`
	Capabilities kairos.SkillCapabilities `json:"capabilities"`
	Version      int                      `json:"version"`
	ExportedAt   time.Time                `json:"exported_at"`
}

// Export returns the current version of a skill as a File.
func (s *Skills) Export(ctx context.Context, sk *kairos.Skill) ([]byte, error) {
	if sk.Current == nil {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "the skill %s has no current version", sk.Name)
	}
	v := sk.Current
	f := File{Format: FileFormat, Name: sk.Name, Description: v.Description, InputSchema: v.InputSchema, Code: v.Code,
		Tests: v.Tests, Capabilities: v.Capabilities, Version: sk.Version, ExportedAt: s.cfg.Now().UTC()}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Approver decides on an import after reading its detail (the whole code,
// the tests and their results, the capabilities, the risk); by names who
// approved.
type Approver func(ctx context.Context, detail string) (approved bool, by string, err error)

// ImportResult is the outcome of an import.
type ImportResult struct {
	Skill       *kairos.Skill
	TestResults []kairos.SkillTestResult
	Detail      string
}

// Import creates a skill for owner from an exported file: an import is a
// create (the tests run in the sandbox, a failing test stops it, then
// approve decides). The file came from outside, so the skill is tainted
// ("an imported file"): its results are untrusted content.
func (s *Skills) Import(ctx context.Context, owner string, data []byte, approve Approver) (*ImportResult, error) {
	var f File
	if err := json.Unmarshal(data, &f); err != nil || f.Format != FileFormat {
		return nil, kairos.Errorf(kairos.EINVALID, "not an exported skill file (kairos_skill: %d)", FileFormat)
	}
	caps := f.Capabilities
	raw, _ := json.Marshal(map[string]any{"action": ActCreate, "name": f.Name, "description": f.Description, "code": f.Code,
		"input_schema": f.InputSchema, "tests": f.Tests, "capabilities": caps})
	tok := make([]byte, 8)
	rand.Read(tok)
	inv := &kairos.ToolInvocation{CallID: "import-" + hex.EncodeToString(tok), Name: "skill", Arguments: raw, UserKey: owner,
		Now: s.cfg.Now(), Tainted: true, TaintSource: "an imported file"}
	a, err := parse(raw)
	if err != nil {
		return nil, err
	}
	pr, err := s.prepare(ctx, inv, a)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{Detail: pr.detail}
	if pr.tr != nil {
		res.TestResults = pr.tr.results
	}
	if !pr.passed() {
		return res, kairos.Errorf(kairos.EINVALID, "the skill's tests failed; nothing was imported")
	}
	ok, by, err := approve(ctx, pr.detail)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, kairos.Errorf(kairos.EFORBIDDEN, "not approved; nothing was imported")
	}
	inv.ApprovedBy = by
	if _, err := s.commit(ctx, inv, a); err != nil {
		return res, err
	}
	res.Skill, err = s.cfg.Store.FindSkill(ctx, owner, f.Name)
	return res, err
}
