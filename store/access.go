package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kairos-agent/kairos"
)

type accessLogRow struct {
	ID        int64 `gorm:"primaryKey"`
	At        int64
	Door      string
	Actor     string
	Via       string
	Method    string
	Path      string
	Status    int
	ElapsedMS int64 `gorm:"column:elapsed_ms"`
}

func (accessLogRow) TableName() string { return "access_log" }

// RecordAccess appends one request to the access log.
func (s *APIStore) RecordAccess(ctx context.Context, a *kairos.AccessEntry) error {
	if a.At.IsZero() {
		a.At = s.db.Now()
	}
	r := accessLogRow{At: ms(a.At), Door: a.Door, Actor: a.Actor, Via: a.Via, Method: a.Method, Path: a.Path, Status: a.Status,
		ElapsedMS: a.Elapsed.Milliseconds()}
	if err := s.db.gdb.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("record access: %w", err)
	}
	return nil
}

// AccessLog lists the access log newest first.
func (s *APIStore) AccessLog(ctx context.Context, p kairos.Page) ([]*kairos.AccessEntry, string, error) {
	n := pageLimit(p.Limit)
	q := s.db.gdb.WithContext(ctx).Order("id DESC").Limit(n + 1)
	if p.Cursor != "" {
		before, err := seqCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("id < ?", before)
	}
	var rows []accessLogRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list access log: %w", err)
	}
	rows, cur := next(rows, n, func(r accessLogRow) string { return strconv.FormatInt(r.ID, 10) })
	out := make([]*kairos.AccessEntry, len(rows))
	for i, r := range rows {
		out[i] = &kairos.AccessEntry{At: fromMS(r.At), Door: r.Door, Actor: r.Actor, Via: r.Via, Method: r.Method, Path: r.Path,
			Status: r.Status, Elapsed: time.Duration(r.ElapsedMS) * time.Millisecond}
	}
	return out, cur, nil
}
