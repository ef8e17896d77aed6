package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// prepared is a create, update or rollback checked and tested by Action,
// kept for its Call (which prepares again when it runs elsewhere).
type prepared struct {
	at      time.Time
	kind    string
	name    string
	cur     *kairos.Skill // update, rollback
	next    *kairos.SkillVersion
	tr      *testRun // create, update
	dropped []string // update: tests of the current version left out
	diff    string   // update, rollback
	detail  string
}

func (pr *prepared) passed() bool { return pr.tr == nil || pr.tr.passed }

// action is what the call asks: a failing create or update asks nobody
// (its call only reports the results); the rest always asks.
func (pr *prepared) action() kairos.ToolAction {
	if !pr.passed() {
		return kairos.ToolAction{Name: kairos.ActionSkillTest, Capability: kairos.CapSkill}
	}
	name := map[string]string{ActCreate: kairos.ActionSkillCreate, ActUpdate: kairos.ActionSkillUpdate,
		ActRollback: kairos.ActionSkillRollback}[pr.kind]
	reason := "a new skill (seed 004 BUILD)"
	switch pr.kind {
	case ActUpdate:
		reason = "a new version of a skill (seed 004 UPDATE)"
	case ActRollback:
		reason = fmt.Sprintf("a skill goes back to version %d", pr.next.Version)
	}
	if len(pr.next.Risk) > 0 {
		reason += "; risk: " + strings.Join(pr.next.Risk, ", ")
	}
	return kairos.ToolAction{Name: name, Capability: kairos.CapSkill, Impactful: true, AlwaysAsk: true, Reason: reason, Detail: pr.detail,
		Summary: pr.sentence()}
}

// sentence is the approval's question: what the skill becomes.
func (pr *prepared) sentence() string {
	name := pr.name
	switch pr.kind {
	case ActUpdate:
		return fmt.Sprintf("Replace your skill %s with version %d (the diff and its tests are below)?", name, pr.next.Version)
	case ActRollback:
		return fmt.Sprintf("Take your skill %s back to version %d (the diff is below)?", name, pr.next.Version)
	}
	return fmt.Sprintf("Add the skill %s: “%s” (its code and tests are below)?", name, kairos.Clip(pr.next.Description, 120))
}

func prepKey(inv *kairos.ToolInvocation) string {
	h := sha256.Sum256(inv.Arguments)
	return inv.UserKey + "\x00" + inv.CallID + "\x00" + hex.EncodeToString(h[:8])
}

// prepare checks a create, update or rollback and runs the tests; the
// result is kept for the call.
func (s *Skills) prepare(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*prepared, error) {
	key := prepKey(inv)
	now := time.Now()
	s.mu.Lock()
	if pr, ok := s.preps[key]; ok && now.Sub(pr.at) < prepTTL {
		s.mu.Unlock()
		return pr, nil
	}
	s.mu.Unlock()
	if !s.pol().Features.SelfUpdate {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "skills are switched off (features.self_update)")
	}
	var pr *prepared
	var err error
	switch a.Action {
	case ActCreate:
		pr, err = s.prepareCreate(ctx, inv, a)
	case ActUpdate:
		pr, err = s.prepareUpdate(ctx, inv, a)
	default:
		pr, err = s.prepareRollback(ctx, inv, a)
	}
	if err != nil {
		return nil, err
	}
	pr.at, pr.kind, pr.name = now, a.Action, a.Name
	pr.detail = detail(pr, inv)
	s.mu.Lock()
	for k, old := range s.preps {
		if now.Sub(old.at) >= prepTTL {
			delete(s.preps, k)
		}
	}
	s.preps[key] = pr
	s.mu.Unlock()
	return pr, nil
}

func (s *Skills) prepareCreate(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*prepared, error) {
	p := s.pol()
	if _, err := s.cfg.Store.FindSkill(ctx, inv.UserKey, a.Name); err == nil {
		return nil, kairos.Errorf(kairos.ECONFLICT, "a skill named %q exists; update it or pick another name", a.Name)
	} else if kairos.ErrorCode(err) != kairos.ENOTFOUND {
		return nil, err
	}
	own, err := s.cfg.Store.Skills(ctx, kairos.SkillFilter{Owner: inv.UserKey})
	if err != nil {
		return nil, err
	}
	if len(own) >= p.Skills.MaxPerUser {
		return nil, kairos.Errorf(kairos.ECONFLICT, "you have %d skills, the most allowed; remove one first", len(own))
	}
	v, err := s.version(p, inv, a, nil)
	if err != nil {
		return nil, err
	}
	return s.tested(ctx, p, &prepared{next: v})
}

func (s *Skills) prepareUpdate(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*prepared, error) {
	p := s.pol()
	cur, err := s.owned(ctx, inv.UserKey, a.Name)
	if err != nil {
		return nil, err
	}
	v, err := s.version(p, inv, a, cur.Current)
	if err != nil {
		return nil, err
	}
	pr := &prepared{cur: cur, next: v}
	for _, t := range cur.Current.Tests {
		if !slices.ContainsFunc(v.Tests, func(x kairos.SkillTest) bool { return x.Name == t.Name }) {
			pr.dropped = append(pr.dropped, t.Name)
		}
	}
	if pr, err = s.tested(ctx, p, pr); err != nil {
		return nil, err
	}
	pr.diff = versionDiff(cur.Current, v) // with the grant the approval shows
	return pr, nil
}

func (s *Skills) prepareRollback(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*prepared, error) {
	cur, err := s.owned(ctx, inv.UserKey, a.Name)
	if err != nil {
		return nil, err
	}
	target, err := s.rollbackTarget(ctx, cur, a.Version)
	if err != nil {
		return nil, err
	}
	return &prepared{cur: cur, next: target, diff: versionDiff(cur.Current, target)}, nil
}

// rollbackTarget is the kept version `want`, or the newest kept one
// older than the current when want is not set.
func (s *Skills) rollbackTarget(ctx context.Context, cur *kairos.Skill, want toolutil.Int) (*kairos.SkillVersion, error) {
	vs, err := s.cfg.Store.SkillVersions(ctx, cur.ID)
	if err != nil {
		return nil, err
	}
	for _, v := range vs { // newest first
		if (want.Set && v.Version == want.Value) || (!want.Set && v.Version < cur.Version) {
			if v.Version == cur.Version {
				return nil, kairos.Errorf(kairos.EINVALID, "version %d is already the current one", v.Version)
			}
			return v, nil
		}
	}
	var kept []string
	for _, v := range vs {
		kept = append(kept, fmt.Sprint(v.Version))
	}
	return nil, kairos.Errorf(kairos.ENOTFOUND, "no version to roll %s back to (kept: %s)", cur.Name, strings.Join(kept, ", "))
}

// owned finds the user's own skill (a shared skill is changed by its owner).
func (s *Skills) owned(ctx context.Context, owner, name string) (*kairos.Skill, error) {
	sk, err := s.cfg.Store.FindSkill(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	if sk.Owner != owner {
		return nil, kairos.Errorf(kairos.EFORBIDDEN, "the skill %s is shared by someone else; only its owner can change it", name)
	}
	if sk.Current == nil {
		return nil, kairos.Errorf(kairos.EINTERNAL, "the skill %s has no current version", name)
	}
	return sk, nil
}

// tested runs the new version's tests and classifies its risk.
func (s *Skills) tested(ctx context.Context, p *kairos.Policy, pr *prepared) (*prepared, error) {
	tr, err := s.runTests(ctx, pr.next)
	if err != nil {
		return nil, err
	}
	pr.tr = tr
	pr.next.Grant = approvalGrant(p, pr.next)
	pr.next.Risk = s.risks(p, pr.next, tr)
	return pr, nil
}
