package store_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func skillVersion(code string) *kairos.SkillVersion {
	return &kairos.SkillVersion{Description: "doubles n", InputSchema: json.RawMessage(`{"type":"object"}`), Code: code,
		Tests: []kairos.SkillTest{{Name: "two", Input: json.RawMessage(`{"n":2}`), Expect: json.RawMessage(`4`)}},
		Risk:  []string{kairos.RiskNetworkRead}, Capabilities: kairos.SkillCapabilities{Hosts: []string{"api.example.org"}}}
}

func TestSkillStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	s := store.NewSkillStore(storetest.MustOpenDB(t))
	sk := &kairos.Skill{Name: "double", Owner: "telegram:1"}
	if err := s.CreateSkill(ctx, sk, skillVersion("function run(i){return i.n*2}")); err != nil {
		t.Fatal(err)
	}
	if sk.ID == 0 || sk.Version != 1 || !sk.Enabled || sk.Scope != kairos.SkillScopeUser {
		t.Fatalf("created %+v", sk)
	}
	if err := s.CreateSkill(ctx, &kairos.Skill{Name: "double", Owner: "telegram:1"}, skillVersion("x")); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := s.CreateSkill(ctx, &kairos.Skill{Name: "Bad-Name", Owner: "telegram:1"}, skillVersion("x")); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("bad name: %v", err)
	}
	// Updates: the switch is conditional on the version it was made from;
	// only the newest `keep` versions stay.
	for i := 2; i <= 4; i++ {
		if err := s.AddSkillVersion(ctx, sk.ID, i-1, skillVersion("function run(i){return i.n*2} // v"+string(rune('0'+i))), 3, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddSkillVersion(ctx, sk.ID, 1, skillVersion("stale"), 3, ""); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("stale update: %v", err)
	}
	vs, err := s.SkillVersions(ctx, sk.ID)
	if err != nil || len(vs) != 3 || vs[0].Version != 4 || vs[2].Version != 2 {
		t.Fatalf("versions %v %v", len(vs), err)
	}
	if vs[0].Tests[0].Name != "two" || vs[0].Capabilities.Hosts[0] != "api.example.org" || vs[0].Risk[0] != kairos.RiskNetworkRead {
		t.Fatalf("version fields %+v", vs[0])
	}
	if err := s.SetSkillVersion(ctx, sk.ID, 1); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("rollback to a pruned version: %v", err)
	}
	if err := s.SetSkillVersion(ctx, sk.ID, 2); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindSkill(ctx, "telegram:1", "double")
	if err != nil || got.Version != 2 || got.Current == nil || got.Current.Version != 2 {
		t.Fatalf("after rollback %+v %v", got, err)
	}
	// A rollback is not pruned away by the next update: the current one stays.
	if err := s.AddSkillVersion(ctx, sk.ID, 2, skillVersion("v5"), 1, "a web page"); err != nil {
		t.Fatal(err)
	}
	if vs, _ := s.SkillVersions(ctx, sk.ID); len(vs) != 1 || vs[0].Version != 5 {
		t.Fatalf("keep 1: %d versions", len(vs))
	}
	got, _ = s.FindSkill(ctx, "telegram:1", "double")
	if got.Tainted {
		t.Fatal("an untainted version tainted the skill")
	}
	tv := skillVersion("v6")
	tv.Tainted = true
	if err := s.AddSkillVersion(ctx, sk.ID, 5, tv, 5, "a web page"); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.FindSkill(ctx, "telegram:1", "double"); !got.Tainted || got.TaintSource != "a web page" {
		t.Fatalf("taint %+v", got)
	}
}

func TestSkillStoreScopeAndFailures(t *testing.T) {
	ctx := context.Background()
	s := store.NewSkillStore(storetest.MustOpenDB(t))
	a := &kairos.Skill{Name: "weather", Owner: "telegram:1"}
	b := &kairos.Skill{Name: "weather", Owner: "telegram:2"}
	c := &kairos.Skill{Name: "stocks", Owner: "telegram:2"}
	for _, sk := range []*kairos.Skill{a, b, c} {
		if err := s.CreateSkill(ctx, sk, skillVersion("function run(){}")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.FindSkill(ctx, "telegram:3", "stocks"); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("another user's skill is visible: %v", err)
	}
	if err := s.SetSkillScope(ctx, c.ID, kairos.SkillScopeShared); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindSkill(ctx, "telegram:3", "stocks"); err != nil || got.Owner != "telegram:2" {
		t.Fatalf("shared skill: %+v %v", got, err)
	}
	if err := s.SetSkillScope(ctx, a.ID, kairos.SkillScopeShared); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSkillScope(ctx, b.ID, kairos.SkillScopeShared); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("two shared skills of one name: %v", err)
	}
	// User 2 sees their own weather, not the shared one of user 1.
	list, err := s.Skills(ctx, kairos.SkillFilter{Owner: "telegram:2", WithShared: true})
	if err != nil || len(list) != 2 || list[0].Name != "stocks" || list[1].Owner != "telegram:2" {
		t.Fatalf("list %+v %v", list, err)
	}
	// Failures in a row disable once; a success resets the count.
	at := time.Now()
	s.RecordSkillRun(ctx, b.ID, false, 2, at)
	s.RecordSkillRun(ctx, b.ID, true, 2, at)
	if d, _ := s.RecordSkillRun(ctx, b.ID, false, 2, at); d {
		t.Fatal("disabled after one failure since a success")
	}
	var wg sync.WaitGroup
	disabled := make(chan bool, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.RecordSkillRun(ctx, b.ID, false, 2, at)
			if err != nil {
				t.Error(err)
			}
			disabled <- d
		}()
	}
	wg.Wait()
	close(disabled)
	n := 0
	for d := range disabled {
		if d {
			n++
		}
	}
	got, _ := s.FindSkill(ctx, "telegram:2", "weather")
	if n != 1 || got.Enabled || got.Runs != 7 || got.RunFailures != 6 || got.DisabledReason == "" {
		t.Fatalf("disabled %d times; %+v", n, got)
	}
	if list, _ := s.Skills(ctx, kairos.SkillFilter{Owner: "telegram:2", EnabledOnly: true}); len(list) != 1 {
		t.Fatalf("enabled only: %d", len(list))
	}
	if err := s.SetSkillEnabled(ctx, b.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindSkill(ctx, "telegram:2", "weather"); !got.Enabled || got.Failures != 0 {
		t.Fatalf("re-enabled %+v", got)
	}
}

// The grant an approval showed is kept with its version; a version stored
// without one reads back without one (tools/skill derives it), and an
// unreadable one grants nothing.
func TestSkillGrantKept(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	s := store.NewSkillStore(db)
	v := skillVersion("function run(i){return i.n*2}")
	v.Grant = &kairos.SkillGrant{Hosts: []string{"api.example.org"}, Methods: []string{"GET"}, Secrets: []string{"K"},
		Budget: kairos.CellBudget{TimeBudgetMS: 5000, MaxNetworkCalls: 3}}
	sk := &kairos.Skill{Name: "granted", Owner: "telegram:1"}
	if err := s.CreateSkill(ctx, sk, v); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSkill(ctx, &kairos.Skill{Name: "old", Owner: "telegram:1"}, skillVersion("function run(i){return 1}")); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindSkill(ctx, "telegram:1", "granted")
	if err != nil || got.Current.Grant == nil {
		t.Fatalf("%+v %v", got, err)
	}
	if b, _ := json.Marshal(got.Current.Grant); string(b) != `{"hosts":["api.example.org"],"methods":["GET"],"secrets":["K"],"budget":{"time_budget_ms":5000,"max_network_calls":3}}` {
		t.Fatalf("grant read back as %s", b)
	}
	if old, _ := s.FindSkill(ctx, "telegram:1", "old"); old.Current.Grant != nil {
		t.Fatalf("a version stored without a grant has %+v", old.Current.Grant)
	}
	if err := db.Gorm().Table("skill_versions").Where("skill_id = ?", sk.ID).Update("approved_grant", "{not json").Error; err != nil {
		t.Fatal(err)
	}
	if bad, _ := s.FindSkill(ctx, "telegram:1", "granted"); bad.Current.Grant == nil || len(bad.Current.Grant.Hosts)+len(bad.Current.Grant.Methods) != 0 {
		t.Fatalf("an unreadable grant reads as %+v", bad.Current.Grant)
	}
}

// TestSkillsListedByNameThenID: every form of the skill list comes in
// name order, then creation order, whatever order the skills were made
// in (SQLite sorts in Go now, PostgreSQL in the query).
func TestSkillsListedByNameThenID(t *testing.T) {
	ctx := context.Background()
	s := store.NewSkillStore(storetest.MustOpenDB(t))
	names := []string{"zeta", "alpha", "mid", "alpha2", "beta", "a", "zz9", "m1", "m10", "m2"}
	for i, n := range names {
		owner := []string{"telegram:1", "telegram:2"}[i%2]
		sk := &kairos.Skill{Name: n, Owner: owner}
		if err := s.CreateSkill(ctx, sk, skillVersion("function run(){}")); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := s.SetSkillScope(ctx, sk.ID, kairos.SkillScopeShared); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range []kairos.SkillFilter{{}, {Owner: "telegram:1"}, {Owner: "telegram:1", WithShared: true}, {Owner: "telegram:2", WithShared: true, EnabledOnly: true}} {
		got, err := s.Skills(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatalf("%+v: no skills", f)
		}
		sorted := slices.IsSortedFunc(got, func(a, b *kairos.Skill) int {
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		if !sorted {
			var order []string
			for _, sk := range got {
				order = append(order, sk.Name)
			}
			t.Errorf("%+v: skills in order %v", f, order)
		}
	}
}
