package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/store"
)

// runOut runs one command of e and returns its exit status and output.
func runOut(e *env, args ...string) (int, string) {
	e.out.Reset()
	e.logs.Reset()
	code := e.main().Main(context.Background(), args)
	return code, e.out.String() + e.logs.String()
}

// TestBackupCheckAndRestore: a backup checks ok and restores in place of
// the database, which is kept beside it; the grant made after the backup
// is gone from the restored one and still in the kept one (there was no
// restore and no check: `kairos backup check FILE` and `kairos restore
// FILE` were usage errors).
func TestBackupCheckAndRestore(t *testing.T) {
	e := sqliteEnv(t)
	backups := t.TempDir()
	b := filepath.Join(backups, "b.db")
	for _, args := range [][]string{{"access", "allow", "4242"}, {"backup", b}, {"access", "allow", "5151"}} {
		if code, out := runOut(e, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	code, out := runOut(e, "backup", "check", b)
	if code != 0 || !strings.Contains(out, b+": ok, schema version") || !strings.Contains(out, "(current)") {
		t.Fatalf("backup check: exit %d: %s", code, out)
	}
	if ents, _ := os.ReadDir(backups); len(ents) != 1 {
		t.Fatalf("backup check left files beside the backup: %v", ents)
	}
	code, out = runOut(e, "restore", b)
	if code != 0 || !strings.Contains(out, "kept as ") {
		t.Fatalf("restore: exit %d: %s", code, out)
	}
	kept := strings.TrimSpace(out[strings.Index(out, "kept as ")+len("kept as "):])
	if code, out := runOut(e, "access", "list"); code != 0 || !strings.Contains(out, "4242") || strings.Contains(out, "5151") {
		t.Fatalf("after restore: exit %d:\n%s", code, out)
	}
	if n := grantsIn(t, kept, 5151); n != 1 {
		t.Fatalf("the replaced database %s lost the later grant (%d rows)", kept, n)
	}
	if fi, err := os.Stat(filepath.Join(e.vars["KAIROS_DATA_DIR"], "kairos.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("restored database: %v %v", err, fi.Mode().Perm())
	}
}

func grantsIn(t *testing.T, path string, user int64) int {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM access_grants WHERE user_id = ?", user).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRestoreRefusesAndChangesNothing: a missing, damaged, foreign or
// newer file, or a database in use, is refused with exit 1 and the
// database stays byte for byte as it was, with nothing kept or left.
func TestRestoreRefusesAndChangesNothing(t *testing.T) {
	e := sqliteEnv(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	for _, args := range [][]string{{"access", "allow", "4242"}, {"backup", good}} {
		if code, out := runOut(e, args...); code != 0 {
			t.Fatalf("%v: %d %s", args, code, out)
		}
	}
	raw, _ := os.ReadFile(good)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o600)
		return p
	}
	damaged := bytes.Clone(raw)
	for i := 4096; i < len(damaged) && i < 4096*6; i++ {
		damaged[i] = byte(i * 7)
	}
	newer := write("newer.db", raw)
	if db, err := sql.Open("sqlite3", newer); err != nil {
		t.Fatal(err)
	} else {
		if _, err := db.Exec("INSERT INTO schema_migrations(version, name, applied_at) VALUES (999999, 'from the future', 0)"); err != nil {
			t.Fatal(err)
		}
		db.Exec("PRAGMA journal_mode=DELETE")
		db.Close()
	}
	foreign := filepath.Join(dir, "foreign.db")
	if db, err := sql.Open("sqlite3", foreign); err == nil {
		db.Exec("CREATE TABLE t(x)")
		db.Close()
	}
	cases := map[string]struct{ file, want string }{
		"missing":       {filepath.Join(dir, "nope.db"), "no such file"},
		"not SQLite":    {write("text.db", []byte("hello, this is not a database at all")), "not a SQLite database"},
		"empty":         {write("empty.db", nil), "not a SQLite database"},
		"truncated":     {write("half.db", raw[:len(raw)/2]), "damaged"},
		"damaged pages": {write("damaged.db", damaged), "damaged"},
		"not Kairos":    {foreign, "not a Kairos database"},
		"newer Kairos":  {newer, "written by a newer Kairos"},
	}
	live := filepath.Join(e.vars["KAIROS_DATA_DIR"], "kairos.db")
	before, _ := os.ReadFile(live)
	files := func() int { ents, _ := os.ReadDir(e.vars["KAIROS_DATA_DIR"]); return len(ents) }
	n := files()
	check := func(name, want string, args ...string) {
		t.Helper()
		code, out := runOut(e, args...)
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("%s: %v: exit %d (want 1), %q (want %q)", name, args, code, out, want)
		}
		if after, _ := os.ReadFile(live); !bytes.Equal(before, after) || files() != n {
			t.Fatalf("%s: the refused restore changed the data folder", name)
		}
	}
	for name, tc := range cases {
		check(name, tc.want, "restore", tc.file)
		if name != "newer Kairos" {
			check(name, tc.want, "backup", "check", tc.file)
		}
	}
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"]}) // as kairos run holds it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before, _ = os.ReadFile(live)
	n = files()
	check("in use", "is in use", "restore", good)
}
