package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

// SkillStore implements kairos.SkillStore.
type SkillStore struct{ db *DB }

var _ kairos.SkillStore = (*SkillStore)(nil)

// NewSkillStore returns the skill repository of db.
func NewSkillStore(db *DB) *SkillStore { return &SkillStore{db: db} }

type skillRow struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	Owner          string
	Name           string
	Scope          string
	Enabled        int
	DisabledReason string
	Tainted        int
	TaintSource    string
	CurrentVersion int
	Failures       int
	Runs           int64
	RunFailures    int64
	LastRunAt      int64
	CreatedAt      int64 `gorm:"autoCreateTime:false"`
	UpdatedAt      int64 `gorm:"autoUpdateTime:false"`
}

func (skillRow) TableName() string { return "skills" }

type skillVersionRow struct {
	ID           int64 `gorm:"primaryKey;autoIncrement"`
	SkillID      int64
	Version      int
	Description  string
	InputSchema  string
	Code         string
	Tests        string
	Capabilities string
	Risk         string
	// ApprovedGrant is the version's kairos.SkillGrant as JSON; '' for a
	// version approved before grants were kept.
	ApprovedGrant string
	Tainted       int
	CreatedBy     string
	ApprovedBy    string
	CreatedAt     int64 `gorm:"autoCreateTime:false"`
}

func (skillVersionRow) TableName() string { return "skill_versions" }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r *skillRow) skill() *kairos.Skill {
	return &kairos.Skill{ID: r.ID, Name: r.Name, Owner: r.Owner, Scope: r.Scope, Enabled: r.Enabled != 0,
		DisabledReason: r.DisabledReason, Tainted: r.Tainted != 0, TaintSource: r.TaintSource, Version: r.CurrentVersion,
		Failures: r.Failures, Runs: r.Runs, RunFailures: r.RunFailures, CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt)}
}

func (r *skillVersionRow) version() *kairos.SkillVersion {
	v := &kairos.SkillVersion{Version: r.Version, Description: r.Description, InputSchema: json.RawMessage(r.InputSchema),
		Code: r.Code, Tainted: r.Tainted != 0, CreatedBy: r.CreatedBy, ApprovedBy: r.ApprovedBy, CreatedAt: fromMS(r.CreatedAt)}
	_ = json.Unmarshal([]byte(r.Tests), &v.Tests)
	_ = json.Unmarshal([]byte(r.Capabilities), &v.Capabilities)
	if r.Risk != "" {
		v.Risk = strings.Split(r.Risk, ",")
	}
	if r.ApprovedGrant != "" {
		var g kairos.SkillGrant
		if json.Unmarshal([]byte(r.ApprovedGrant), &g) == nil {
			v.Grant = &g
		} else {
			// An unreadable grant grants nothing rather than everything.
			v.Grant = &kairos.SkillGrant{}
		}
	}
	return v
}

func versionRow(id int64, v *kairos.SkillVersion, at int64) (*skillVersionRow, error) {
	if strings.TrimSpace(v.Code) == "" || !json.Valid(v.InputSchema) {
		return nil, kairos.Errorf(kairos.EINVALID, "a skill version needs its code and a JSON input schema")
	}
	tests, err := json.Marshal(v.Tests)
	if err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "skill tests: %v", err)
	}
	caps, _ := json.Marshal(v.Capabilities)
	var grant string
	if v.Grant != nil {
		b, err := json.Marshal(v.Grant)
		if err != nil {
			return nil, kairos.Errorf(kairos.EINVALID, "skill grant: %v", err)
		}
		grant = string(b)
	}
	return &skillVersionRow{ApprovedGrant: grant, SkillID: id, Version: v.Version, Description: cleanText(v.Description),
		InputSchema: string(v.InputSchema), Code: cleanText(v.Code), Tests: cleanText(string(tests)),
		Capabilities: string(caps), Risk: strings.Join(v.Risk, ","), Tainted: b2i(v.Tainted),
		CreatedBy: v.CreatedBy, ApprovedBy: v.ApprovedBy, CreatedAt: at}, nil
}

// CreateSkill implements kairos.SkillStore.
func (s *SkillStore) CreateSkill(ctx context.Context, sk *kairos.Skill, v *kairos.SkillVersion) error {
	if sk == nil || v == nil || sk.Owner == "" || !kairos.ValidSkillName(sk.Name) {
		return kairos.Errorf(kairos.EINVALID, "a skill needs an owner and a valid name")
	}
	scope := sk.Scope
	if scope == "" {
		scope = kairos.SkillScopeUser
	}
	now := ms(s.db.Now())
	if v.CreatedAt.IsZero() {
		v.CreatedAt = fromMS(now)
	}
	v.Version = 1
	row := skillRow{Owner: sk.Owner, Name: sk.Name, Scope: scope, Enabled: 1, Tainted: b2i(sk.Tainted || v.Tainted),
		TaintSource: sk.TaintSource, CurrentVersion: 1, CreatedAt: now, UpdatedAt: now}
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&skillRow{}).Where("owner = ? AND name = ?", sk.Owner, sk.Name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return kairos.Errorf(kairos.ECONFLICT, "you already have a skill named %q; update it instead", sk.Name)
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		vr, err := versionRow(row.ID, v, ms(v.CreatedAt))
		if err != nil {
			return err
		}
		return tx.Create(vr).Error
	})
	if err != nil {
		if c := kairos.ErrorCode(err); c == kairos.ECONFLICT || c == kairos.EINVALID {
			return err
		}
		return fmt.Errorf("create skill: %w", err)
	}
	*sk = *row.skill()
	sk.Current = v
	return nil
}

// withCurrent loads the current version of each skill (one query).
func (s *SkillStore) withCurrent(ctx context.Context, rows []skillRow) ([]*kairos.Skill, error) {
	out := make([]*kairos.Skill, 0, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	var vs []skillVersionRow
	if err := s.db.gdb.WithContext(ctx).Where("skill_id IN ?", ids).Find(&vs).Error; err != nil {
		return nil, fmt.Errorf("load skill versions: %w", err)
	}
	cur := map[int64]*skillVersionRow{}
	for i := range rows {
		for j := range vs {
			if vs[j].SkillID == rows[i].ID && vs[j].Version == rows[i].CurrentVersion {
				cur[rows[i].ID] = &vs[j]
			}
		}
	}
	for i := range rows {
		sk := rows[i].skill()
		if v := cur[rows[i].ID]; v != nil {
			sk.Current = v.version()
		}
		out = append(out, sk)
	}
	return out, nil
}

// FindSkill implements kairos.SkillStore.
func (s *SkillStore) FindSkill(ctx context.Context, owner, name string) (*kairos.Skill, error) {
	var rows []skillRow
	q := s.db.gdb.WithContext(ctx).Where("name = ?", name)
	if owner != "" {
		q = q.Where("owner = ? OR scope = ?", owner, kairos.SkillScopeShared)
	}
	if err := q.Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find skill: %w", err)
	}
	pick := -1
	for i := range rows {
		if rows[i].Owner == owner && owner != "" {
			pick = i
			break
		}
		if pick < 0 || (rows[i].Scope == kairos.SkillScopeShared && rows[pick].Scope != kairos.SkillScopeShared) {
			pick = i
		}
	}
	if pick < 0 {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no skill named %q", name)
	}
	sks, err := s.withCurrent(ctx, rows[pick:pick+1])
	if err != nil {
		return nil, err
	}
	return sks[0], nil
}

// Skills implements kairos.SkillStore.
func (s *SkillStore) Skills(ctx context.Context, f kairos.SkillFilter) ([]*kairos.Skill, error) {
	rows, err := s.skillRows(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	if f.Owner != "" && f.WithShared {
		// The owner's own skill hides a shared one of the same name.
		own := map[string]bool{}
		for _, r := range rows {
			if r.Owner == f.Owner {
				own[r.Name] = true
			}
		}
		kept := rows[:0]
		for _, r := range rows {
			if r.Owner == f.Owner || !own[r.Name] {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	return s.withCurrent(ctx, rows)
}

// skillRows reads the skills f selects, ordered by name and id, by a
// statement prepared once (every turn lists the user's skills).
func (s *SkillStore) skillRows(ctx context.Context, f kairos.SkillFilter) ([]skillRow, error) {
	var where []string
	var args []any
	switch {
	case f.Owner != "" && f.WithShared:
		where, args = append(where, "(owner = ? OR scope = ?)"), append(args, f.Owner, kairos.SkillScopeShared)
	case f.Owner != "":
		where, args = append(where, "owner = ?"), append(args, f.Owner)
	}
	if f.EnabledOnly {
		where = append(where, "enabled = 1")
	}
	q := `SELECT id, owner, name, scope, enabled, disabled_reason, tainted, taint_source, current_version, failures,
		runs, run_failures, last_run_at, created_at, updated_at FROM skills`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if s.db.dialect != DialectSQLite {
		q += " ORDER BY name, id"
	}
	st, err := s.db.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var rows []skillRow
	for rs.Next() {
		var r skillRow
		if err := rs.Scan(&r.ID, &r.Owner, &r.Name, &r.Scope, &r.Enabled, &r.DisabledReason, &r.Tainted, &r.TaintSource,
			&r.CurrentVersion, &r.Failures, &r.Runs, &r.RunFailures, &r.LastRunAt, &r.CreatedAt, &r.UpdatedAt); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	if s.db.dialect == DialectSQLite {
		// SQLite's own order (BINARY: bytewise), without the temporary
		// b-tree an ORDER BY costs it on every turn, rows or none.
		slices.SortFunc(rows, func(a, b skillRow) int {
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
	}
	return rows, rs.Err()
}

// SkillVersions implements kairos.SkillStore.
func (s *SkillStore) SkillVersions(ctx context.Context, id int64) ([]*kairos.SkillVersion, error) {
	var vs []skillVersionRow
	if err := s.db.gdb.WithContext(ctx).Where("skill_id = ?", id).Order("version DESC").Find(&vs).Error; err != nil {
		return nil, fmt.Errorf("list skill versions: %w", err)
	}
	out := make([]*kairos.SkillVersion, len(vs))
	for i := range vs {
		out[i] = vs[i].version()
	}
	return out, nil
}
