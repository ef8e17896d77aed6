package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/migrations"
)

// BackupInfo is what CheckBackup read in a backup file.
type BackupInfo struct {
	Versions []int64          // the migrations the file records, in order
	Latest   int64            // the newest migration this binary knows
	Unknown  []int64          // recorded versions this binary does not know (a newer Kairos wrote the file)
	Rows     map[string]int64 // rows of a few tables, as a sign of what the file holds
}

// Schema is the file's newest recorded migration.
func (b *BackupInfo) Schema() int64 {
	if len(b.Versions) == 0 {
		return 0
	}
	return b.Versions[len(b.Versions)-1]
}

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// CheckBackup reads the SQLite file at path without changing or creating
// anything (read-only, immutable: no lock, no -wal or -shm file): SQLite's
// integrity check, then the migrations it records. ENOTFOUND when there
// is no file; EINVALID when it is not a sound Kairos database.
func CheckBackup(ctx context.Context, path string) (*BackupInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "%s: no such file", path)
	} else if err != nil {
		return nil, fmt.Errorf("check backup: %w", err)
	}
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !bytes.Equal(head, sqliteMagic) {
		return nil, kairos.Errorf(kairos.EINVALID, "%s is not a SQLite database", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("check backup: %w", err)
	}
	raw, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return nil, fmt.Errorf("check backup: %w", err)
	}
	defer raw.Close()
	var problems []string
	rows, err := raw.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "%s is damaged: %v", path, err)
	}
	for rows.Next() {
		var p string
		if rows.Scan(&p) == nil && p != "ok" {
			problems = append(problems, p)
		}
	}
	if err := rows.Err(); err != nil {
		problems = append(problems, err.Error())
	}
	rows.Close()
	if len(problems) > 0 {
		return nil, kairos.Errorf(kairos.EINVALID, "%s is damaged: %s", path, strings.Join(problems[:min(3, len(problems))], "; "))
	}
	return readBackupInfo(ctx, raw, path)
}

func readBackupInfo(ctx context.Context, raw *sql.DB, path string) (*BackupInfo, error) {
	info := &BackupInfo{Rows: map[string]int64{}}
	rows, err := raw.QueryContext(ctx, "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "%s is not a Kairos database (no schema_migrations table)", path)
	}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err == nil {
			info.Versions = append(info.Versions, v)
		}
	}
	rows.Close()
	known, err := loadMigrations(migrations.FS, DialectSQLite)
	if err != nil {
		return nil, err
	}
	var versions []int64
	for _, m := range known {
		versions = append(versions, m.version)
	}
	info.Latest = versions[len(versions)-1]
	for _, v := range info.Versions {
		if !slices.Contains(versions, v) {
			info.Unknown = append(info.Unknown, v)
		}
	}
	for _, table := range []string{"messages", "memories", "schedules"} {
		var n int64
		if raw.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n) == nil {
			info.Rows[table] = n
		}
	}
	return info, nil
}

// Restore puts the backup at path in place of the SQLite database in
// dataDir (created 0700 when missing), after CheckBackup; a file written
// by a newer Kairos is refused. The backup is copied to a temporary file
// beside the database and renamed over it; the database it replaces is
// kept whole as kairos.db.before-restore-<time> (returned), never lost.
// ECONFLICT while another process has the database open (a kairos run or
// kairos chat): stop it first.
func Restore(ctx context.Context, dataDir, path string, now time.Time) (kept string, info *BackupInfo, err error) {
	if info, err = CheckBackup(ctx, path); err != nil {
		return "", nil, err
	}
	if len(info.Unknown) > 0 {
		return "", info, kairos.Errorf(kairos.EINVALID, "%s was written by a newer Kairos (migrations %v are unknown to this binary): restore it with that version", path, info.Unknown)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", info, fmt.Errorf("restore: %w", err)
	}
	target := filepath.Join(dataDir, "kairos.db")
	tmp, err := copyBeside(path, target)
	if err != nil {
		return "", info, err
	}
	defer os.Remove(tmp)
	if _, err := os.Stat(target); err == nil {
		release, err := holdUnused(ctx, target)
		if err != nil {
			return "", info, err
		}
		defer release()
		kept = target + ".before-restore-" + now.UTC().Format("20060102-150405")
		if err := os.Link(target, kept); err != nil {
			return "", info, fmt.Errorf("restore: keep the current database: %w", err)
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return kept, info, fmt.Errorf("restore: %w", err)
	}
	for _, side := range []string{"-wal", "-shm"} { // the old database's, checkpointed by holdUnused
		os.Remove(target + side)
	}
	return kept, info, nil
}

// copyBeside copies src to a 0600 temporary file in dst's folder.
func copyBeside(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".restore-*")
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(0o600)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("restore: %w", err)
	}
	return out.Name(), nil
}

// holdUnused makes sure no other connection has the database at path
// open, and keeps it that way until release: SQLite leaves WAL mode only
// when it is the database's one connection, which folds the WAL into the
// file; then an exclusive transaction keeps everyone else out.
func holdUnused(ctx context.Context, path string) (release func(), err error) {
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=2000")
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	raw.SetMaxOpenConns(1)
	conn, err := raw.Conn(ctx)
	if err != nil {
		raw.Close()
		return nil, fmt.Errorf("restore: %w", err)
	}
	inUse := kairos.Errorf(kairos.ECONFLICT, "the database %s is in use (is kairos run or kairos chat running?): stop it, then restore; nothing was changed", path)
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil || mode != "delete" {
		conn.Close()
		raw.Close()
		return nil, inUse
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		conn.Close()
		raw.Close()
		return nil, inUse
	}
	return func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		raw.Close()
	}, nil
}

// LatestMigration is the newest migration this binary knows.
func LatestMigration() int64 {
	ms, err := loadMigrations(migrations.FS, DialectSQLite)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}
