package store_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// modes returns the permission bits of kairos.db and its -wal and -shm
// ("-" for a file that does not exist).
func modes(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, suffix := range []string{"", "-wal", "-shm"} {
		fi, err := os.Stat(filepath.Join(dir, "kairos.db"+suffix))
		switch {
		case os.IsNotExist(err):
			out = append(out, "-")
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, fi.Mode().Perm().String())
		}
	}
	return out
}

// TestSQLiteFilesAreOwnerOnly: kairos.db and its -wal and -shm are
// created 0600 (SQLite made them 0644: only the 0700 data folder kept
// other local users out), and files left looser by an older version are
// tightened at start, with one log line.
func TestSQLiteFilesAreOwnerOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec("CREATE TABLE t_mode (x INTEGER); INSERT INTO t_mode VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	// While open, in WAL mode: the database, its WAL and its shared memory.
	if got := strings.Join(modes(t, dir), " "); got != "-rw------- -rw------- -rw-------" {
		t.Fatalf("modes while open: %s", got)
	}
	db.Close()

	for _, suffix := range []string{"", "-wal", "-shm"} {
		p := filepath.Join(dir, "kairos.db"+suffix)
		os.WriteFile(p, nil, 0o600) // -wal and -shm may be gone after Close
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(dir, "kairos.db-wal")) // an empty WAL is fine, but keep one loose file absent
	logs := &testkit.SyncBuffer{}
	db, err = store.Open(ctx, store.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := modes(t, dir); got[0] != "-rw-------" || got[2] != "-rw-------" || (got[1] != "-" && got[1] != "-rw-------") {
		t.Fatalf("modes after start: %v", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var said []string
	for _, l := range lines {
		if strings.Contains(l, "0600") {
			said = append(said, l)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "kairos.db") || !strings.Contains(said[0], "0644") {
		t.Fatalf("want one line saying the files were tightened:\n%s", logs.String())
	}
}
