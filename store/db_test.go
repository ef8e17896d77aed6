package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// The linked SQLite must be 3.51.3 or newer: older releases can corrupt a
// WAL database when two connections write or checkpoint at once.
func TestSQLiteVersion(t *testing.T) {
	db := storetest.MustOpenSQLite(t)
	v, err := db.SQLiteVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !versionAtLeast(v, 3, 51, 3) {
		t.Fatalf("sqlite_version() = %s, want >= 3.51.3", v)
	}
	t.Logf("sqlite_version() = %s", v)
}

func TestSQLiteFTS5(t *testing.T) {
	db := storetest.MustOpenSQLite(t)
	if _, err := db.SQL().Exec("CREATE VIRTUAL TABLE t_fts USING fts5(body)"); err != nil {
		t.Fatalf("FTS5 unavailable (build with -tags sqlite_fts5): %v", err)
	}
}

func TestSQLitePragmas(t *testing.T) {
	db := storetest.MustOpenSQLite(t)
	for _, tc := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
	} {
		t.Run(tc.pragma, func(t *testing.T) {
			var got string
			if err := db.SQL().QueryRow("PRAGMA " + tc.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
			}
		})
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	db := storetest.MustOpenDB(t)
	ctx := context.Background()
	first, err := db.AppliedMigrations(ctx)
	if err != nil || len(first) == 0 {
		t.Fatalf("applied = %v, %v", first, err)
	}
	again, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Fatalf("second Migrate applied %v, want nothing", again)
	}
	for i := 1; i < len(first); i++ {
		if first[i] <= first[i-1] {
			t.Fatalf("versions out of order: %v", first)
		}
	}
}

func TestOpenRejectsNonPostgresURL(t *testing.T) {
	_, err := store.Open(context.Background(), store.Config{DatabaseURL: "mysql://x"})
	if err == nil || !strings.Contains(err.Error(), "KAIROS_DATABASE_URL") {
		t.Fatalf("err = %v", err)
	}
}

func versionAtLeast(v string, want ...int) bool {
	parts := strings.Split(v, ".")
	for i, w := range want {
		if i >= len(parts) {
			return false
		}
		n, _ := strconv.Atoi(parts[i])
		if n != w {
			return n > w
		}
	}
	return true
}

func TestLoadMigrationsDialectOverride(t *testing.T) {
	fsys := fstest.MapFS{
		"000001_a.up.sql":          {Data: []byte("CREATE TABLE a (id {{AUTOID}}, b {{BLOB}});")},
		"000002_b.up.sql":          {Data: []byte("plain")},
		"000002_b.sqlite.up.sql":   {Data: []byte("sqlite only")},
		"000002_b.postgres.up.sql": {Data: []byte("postgres only")},
		"README.md":                {Data: []byte("ignored")},
	}
	for _, tc := range []struct {
		dialect string
		want    []string
	}{
		{store.DialectSQLite, []string{"CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, b BLOB);", "sqlite only"}},
		{store.DialectPostgres, []string{"CREATE TABLE a (id BIGSERIAL PRIMARY KEY, b BYTEA);", "postgres only"}},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			got, err := store.LoadMigrations(fsys, tc.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d migrations, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				if got[i].SQL != w {
					t.Errorf("migration %d = %q, want %q", i, got[i].SQL, w)
				}
			}
		})
	}
	if _, err := store.LoadMigrations(fstest.MapFS{"000001_a.up.sql": {}, "000001_b.up.sql": {}}, store.DialectSQLite); err == nil {
		t.Fatal("duplicate versions accepted")
	}
}

func TestBackup(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpenSQLite(t)
	s := store.NewSessionStore(db)
	if _, err := s.OpenSession(ctx, "agent:main:cli:dm:1", "cli:1", time.Now()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "copy.db")
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if err := db.Backup(ctx, path); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("backup over an existing file: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	var n int
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err != nil || n != 1 {
		t.Fatalf("backup holds %d sessions, %v", n, err)
	}
}

// TestReadOnlyOpen: ReadOnly creates nothing when the database is
// missing, and refuses writes on an existing one.
func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := store.Open(ctx, store.Config{DataDir: dir, ReadOnly: true}); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("missing database: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("read-only open created %s: %v", dir, err)
	}
	rw, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := store.Open(ctx, store.Config{DataDir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.SQL().ExecContext(ctx, "CREATE TABLE x (a INTEGER)"); err == nil {
		t.Fatal("write through a read-only handle succeeded")
	}
	if err := ro.Backup(ctx, filepath.Join(t.TempDir(), "b.db")); err != nil {
		t.Fatalf("backup from a read-only handle: %v", err)
	}
}
