package skill

import (
	"context"
	"fmt"

	"github.com/kairos-agent/kairos"
)

// commit performs an approved create, update or rollback (a failing
// create or update answers with its test results and changes nothing).
func (s *Skills) commit(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*response, error) {
	pr, err := s.prepare(ctx, inv, a)
	if err != nil {
		return nil, err
	}
	defer func() {
		s.mu.Lock()
		delete(s.preps, prepKey(inv))
		s.mu.Unlock()
	}()
	r := &response{Diff: pr.diff}
	if pr.tr != nil {
		r.TestResults = pr.tr.results
		r.untrusted = pr.tr.readNet || pr.cur != nil && pr.cur.Tainted
	}
	if !pr.passed() {
		failed := 0
		for _, t := range pr.tr.results {
			if !t.Passed {
				failed++
			}
		}
		r.Error = fmt.Sprintf("%d of %d tests failed; nothing was %s. Fix the code or the tests and try again.",
			failed, len(pr.tr.results), map[string]string{ActCreate: "created", ActUpdate: "changed"}[pr.kind])
		return r, nil
	}
	p := s.pol()
	pr.next.ApprovedBy = inv.ApprovedBy
	pr.next.CreatedAt = s.cfg.Now()
	var sk *kairos.Skill
	switch pr.kind {
	case ActCreate:
		sk = &kairos.Skill{Name: a.Name, Owner: inv.UserKey, Scope: kairos.SkillScopeUser, Tainted: inv.Tainted, TaintSource: inv.TaintSource}
		err = s.cfg.Store.CreateSkill(ctx, sk, pr.next)
	case ActUpdate:
		err = s.cfg.Store.AddSkillVersion(ctx, pr.cur.ID, pr.cur.Version, pr.next, p.Skills.VersionsKept, inv.TaintSource)
	default:
		err = s.cfg.Store.SetSkillVersion(ctx, pr.cur.ID, pr.next.Version)
	}
	if err != nil {
		return nil, err
	}
	s.changed()
	if sk == nil {
		sk = pr.cur
		sk.Version = pr.next.Version
	}
	r.Success = true
	r.Skill = &skillView{Name: sk.Name, Version: pr.next.Version, Description: pr.next.Description}
	if pr.kind != ActRollback {
		r.Note = "Offered as the tool " + kairos.SkillToolName(sk.Name) + " from your next step on."
	}
	s.log.Info("skill "+pr.kind, "skill", sk.Name, "version", pr.next.Version, "owner", sk.Owner, "tainted", inv.Tainted)
	return r, nil
}

// test runs a skill's tests, or the tests of code given with them,
// without storing anything.
func (s *Skills) test(ctx context.Context, inv *kairos.ToolInvocation, a *args) (*response, error) {
	p := s.pol()
	var v *kairos.SkillVersion
	untrusted := false // the tested code is a skill's the user cannot trust
	if a.Code == nil && a.Tests == nil {
		if a.Name == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "test needs a skill's name, or code and tests")
		}
		sk, err := s.cfg.Store.FindSkill(ctx, inv.UserKey, a.Name)
		if err != nil {
			return nil, err
		}
		v, untrusted = sk.Current, untrustedBy(sk, inv.UserKey) != ""
	} else {
		var cur *kairos.SkillVersion
		if a.Name != "" {
			if sk, err := s.cfg.Store.FindSkill(ctx, inv.UserKey, a.Name); err == nil {
				cur, untrusted = sk.Current, untrustedBy(sk, inv.UserKey) != ""
			}
		}
		if a.Description == nil && cur == nil {
			d := "(test)"
			a.Description = &d
		}
		var err error
		if v, err = s.version(p, inv, a, cur); err != nil {
			return nil, err
		}
	}
	tr, err := s.runTests(ctx, v)
	if err != nil {
		return nil, err
	}
	return &response{Success: tr.passed, TestResults: tr.results, untrusted: untrusted || tr.readNet}, nil
}
