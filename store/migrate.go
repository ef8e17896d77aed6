package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos/migrations"
)

// migration is one versioned schema step for the current dialect.
type migration struct {
	version int64
	name    string
	sql     string
}

// loadMigrations reads the embedded files for dialect: a .<dialect>.up.sql
// file replaces the plain .up.sql of the same version; placeholders are
// expanded.
func loadMigrations(fsys fs.FS, dialect string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	plain := map[int64]migration{}
	specific := map[int64]migration{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".up.sql") {
			continue
		}
		base := strings.TrimSuffix(name, ".up.sql")
		target := plain
		for _, d := range []string{DialectSQLite, DialectPostgres} {
			if strings.HasSuffix(base, "."+d) {
				base = strings.TrimSuffix(base, "."+d)
				target = specific
				if d != dialect {
					target = nil
				}
			}
		}
		if target == nil {
			continue
		}
		num, label, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNNNNN_name.up.sql", name)
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("migration %s: bad version: %w", name, err)
		}
		if _, dup := target[v]; dup {
			return nil, fmt.Errorf("migration version %d appears twice", v)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		target[v] = migration{version: v, name: label, sql: expand(string(body), dialect)}
	}
	byVersion := plain
	for v, m := range specific {
		byVersion[v] = m
	}
	out := make([]migration, 0, len(byVersion))
	for _, m := range byVersion {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

func expand(s, dialect string) string {
	if dialect == DialectPostgres {
		return strings.NewReplacer("{{AUTOID}}", "BIGSERIAL PRIMARY KEY", "{{BLOB}}", "BYTEA").Replace(s)
	}
	return strings.NewReplacer("{{AUTOID}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{BLOB}}", "BLOB").Replace(s)
}

// Migrate applies the pending migrations in order, each in its own
// transaction together with its row in schema_migrations. It returns the
// versions it applied. On PostgreSQL an advisory lock keeps replicas that
// start together from racing.
func (db *DB) Migrate(ctx context.Context) ([]int64, error) {
	ms, err := loadMigrations(migrations.FS, db.dialect)
	if err != nil {
		return nil, err
	}
	conn, err := db.sqlDB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if db.dialect == DialectPostgres {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(727001)"); err != nil {
			return nil, fmt.Errorf("migrate: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(727001)")
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied := map[int64]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, err
		}
		applied[v] = true
	}
	rows.Close()
	var done []int64
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := applyOne(ctx, conn, db.dialect, m, db.Now().UnixMilli()); err != nil {
			return done, err
		}
		done = append(done, m.version)
	}
	if len(done) > 0 {
		db.log.Info("migrations applied", "count", len(done), "versions", fmt.Sprint(done))
	}
	return done, nil
}

func applyOne(ctx context.Context, conn *sql.Conn, dialect string, m migration, now int64) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %06d_%s: begin: %w", m.version, m.name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %06d_%s: %w", m.version, m.name, err)
	}
	q := "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"
	if dialect == DialectPostgres {
		q = "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)"
	}
	if _, err := tx.ExecContext(ctx, q, m.version, m.name, now); err != nil {
		return fmt.Errorf("migration %06d_%s: record: %w", m.version, m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %06d_%s: commit: %w", m.version, m.name, err)
	}
	return nil
}

// AppliedMigrations lists the recorded versions in order.
func (db *DB) AppliedMigrations(ctx context.Context) ([]int64, error) {
	var vs []int64
	err := db.gdb.WithContext(ctx).Raw("SELECT version FROM schema_migrations ORDER BY version").Scan(&vs).Error
	return vs, err
}
