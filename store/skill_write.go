package store

import (
	"context"

	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
)

// AddSkillVersion implements kairos.SkillStore.
func (s *SkillStore) AddSkillVersion(ctx context.Context, id int64, from int, v *kairos.SkillVersion, keep int, taintSource string) error {
	now := ms(s.db.Now())
	if v.CreatedAt.IsZero() {
		v.CreatedAt = fromMS(now)
	}
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var top struct{ N int }
		if err := tx.Model(&skillVersionRow{}).Select("COALESCE(MAX(version), 0) AS n").Where("skill_id = ?", id).Scan(&top).Error; err != nil {
			return err
		}
		v.Version = top.N + 1
		vr, err := versionRow(id, v, ms(v.CreatedAt))
		if err != nil {
			return err
		}
		if err := tx.Create(vr).Error; err != nil {
			return err
		}
		upd := map[string]any{"current_version": v.Version, "updated_at": now}
		if v.Tainted {
			upd["tainted"] = 1
			upd["taint_source"] = gorm.Expr("CASE WHEN taint_source = '' THEN ? ELSE taint_source END", taintSource)
		}
		res := tx.Model(&skillRow{}).Where("id = ? AND current_version = ?", id, from).Updates(upd)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return kairos.Errorf(kairos.ECONFLICT, "the skill changed meanwhile (its version is no longer %d)", from)
		}
		return pruneVersions(tx, id, v.Version, keep)
	})
	if err != nil {
		if c := kairos.ErrorCode(err); c == kairos.ECONFLICT || c == kairos.EINVALID {
			return err
		}
		return fmt.Errorf("add skill version: %w", err)
	}
	return nil
}

// pruneVersions deletes the versions of a skill older than the newest
// keep ones, never the current one.
func pruneVersions(tx *gorm.DB, id int64, current, keep int) error {
	if keep <= 0 {
		return nil
	}
	var vs []int
	if err := tx.Model(&skillVersionRow{}).Where("skill_id = ?", id).Order("version DESC").Pluck("version", &vs).Error; err != nil {
		return err
	}
	var drop []int
	for i, n := range vs {
		if i >= keep && n != current {
			drop = append(drop, n)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	return tx.Where("skill_id = ? AND version IN ?", id, drop).Delete(&skillVersionRow{}).Error
}

// SetSkillVersion implements kairos.SkillStore.
func (s *SkillStore) SetSkillVersion(ctx context.Context, id int64, version int) error {
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&skillVersionRow{}).Where("skill_id = ? AND version = ?", id, version).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return kairos.Errorf(kairos.ENOTFOUND, "version %d of the skill is not kept", version)
		}
		return tx.Model(&skillRow{}).Where("id = ?", id).Updates(map[string]any{"current_version": version,
			"failures": 0, "updated_at": ms(s.db.Now())}).Error
	})
	if err != nil && kairos.ErrorCode(err) != kairos.ENOTFOUND {
		return fmt.Errorf("set skill version: %w", err)
	}
	return err
}

// SetSkillEnabled implements kairos.SkillStore.
func (s *SkillStore) SetSkillEnabled(ctx context.Context, id int64, enabled bool, reason string) error {
	upd := map[string]any{"enabled": b2i(enabled), "disabled_reason": reason, "updated_at": ms(s.db.Now())}
	if enabled {
		upd["failures"], upd["disabled_reason"] = 0, ""
	}
	return s.update(ctx, id, upd)
}

// SetSkillScope implements kairos.SkillStore.
func (s *SkillStore) SetSkillScope(ctx context.Context, id int64, scope string) error {
	if scope != kairos.SkillScopeUser && scope != kairos.SkillScopeShared {
		return kairos.Errorf(kairos.EINVALID, "unknown skill scope %q", scope)
	}
	err := s.db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if scope == kairos.SkillScopeShared {
			var n int64
			sub := tx.Model(&skillRow{}).Select("name").Where("id = ?", id)
			if err := tx.Model(&skillRow{}).Where("scope = ? AND id <> ? AND name IN (?)", scope, id, sub).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return kairos.Errorf(kairos.ECONFLICT, "another shared skill has that name")
			}
		}
		res := tx.Model(&skillRow{}).Where("id = ?", id).Updates(map[string]any{"scope": scope, "updated_at": ms(s.db.Now())})
		if res.Error == nil && res.RowsAffected == 0 {
			return kairos.Errorf(kairos.ENOTFOUND, "skill %d not found", id)
		}
		return res.Error
	})
	if err != nil && kairos.ErrorCode(err) == kairos.EINTERNAL {
		return fmt.Errorf("share skill: %w", err)
	}
	return err
}

func (s *SkillStore) update(ctx context.Context, id int64, upd map[string]any) error {
	res := s.db.gdb.WithContext(ctx).Model(&skillRow{}).Where("id = ?", id).Updates(upd)
	if res.Error != nil {
		return fmt.Errorf("update skill: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "skill %d not found", id)
	}
	return nil
}

// RecordSkillRun implements kairos.SkillStore.
func (s *SkillStore) RecordSkillRun(ctx context.Context, id int64, ok bool, maxFailures int, at time.Time) (bool, error) {
	db := s.db.gdb.WithContext(ctx)
	if ok {
		return false, db.Model(&skillRow{}).Where("id = ?", id).Updates(map[string]any{"runs": gorm.Expr("runs + 1"),
			"failures": 0, "last_run_at": ms(at)}).Error
	}
	disabled := false
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&skillRow{}).Where("id = ?", id).Updates(map[string]any{"runs": gorm.Expr("runs + 1"),
			"run_failures": gorm.Expr("run_failures + 1"), "failures": gorm.Expr("failures + 1"), "last_run_at": ms(at)}).Error; err != nil {
			return err
		}
		if maxFailures <= 0 {
			return nil
		}
		res := tx.Model(&skillRow{}).Where("id = ? AND enabled = 1 AND failures >= ?", id, maxFailures).
			Updates(map[string]any{"enabled": 0, "disabled_reason": fmt.Sprintf("%d runs in a row failed", maxFailures), "updated_at": ms(at)})
		disabled = res.RowsAffected == 1
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("record skill run: %w", err)
	}
	return disabled, nil
}
