package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyCommandsCreateNothing: with no database, the reading
// commands create no data folder and run no migration.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	parallel(t)
	cell := filepath.Join(t.TempDir(), "c.js")
	os.WriteFile(cell, []byte(`output({ok: true})`), 0o600)
	for _, args := range [][]string{
		{"schedule", "list"},
		{"skill", "list"},
		{"skill", "show", "x"},
		{"access", "list"},
		{"cell", "run", cell},
		{"clock", "parse", "tomorrow 9am", "--tz", "UTC"},
		{"policy", "check"},
		{"mcp", "check"},
		{"clock", "export"},
		{"backup", filepath.Join(t.TempDir(), "b.db")},
	} {
		t.Run(strings.Join(args[:2], "_"), func(t *testing.T) {
			e := newEnv(t)
			e.main().Main(context.Background(), args)
			if _, err := os.Stat(e.vars["KAIROS_DATA_DIR"]); !os.IsNotExist(err) {
				t.Fatalf("%v created the data folder: %v\n%s", args, err, e.logs.String())
			}
		})
	}
}

// TestReadOnlyCommandsLeaveTheDatabaseAlone: on an existing database the
// reading commands change no byte of it (mode=ro, no migration).
func TestReadOnlyCommandsLeaveTheDatabaseAlone(t *testing.T) {
	e := sqliteEnv(t) // it compares the SQLite file's bytes and backs it up
	if code := e.main().Main(context.Background(), []string{"migrate"}); code != 0 {
		t.Fatalf("migrate: %d %s", code, e.logs.String())
	}
	dbPath := filepath.Join(e.vars["KAIROS_DATA_DIR"], "kairos.db")
	before, _ := os.ReadFile(dbPath)
	out := t.TempDir()
	for _, args := range [][]string{
		{"schedule", "list"}, {"access", "list"}, {"clock", "export"}, {"skill", "list"},
		{"clock", "export", filepath.Join(out, "clock.json")}, {"backup", filepath.Join(out, "b.db")},
	} {
		if code := e.main().Main(context.Background(), args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.logs.String())
		}
	}
	if after, _ := os.ReadFile(dbPath); !bytes.Equal(before, after) {
		t.Fatal("a reading command changed the database file")
	}
	for _, name := range []string{"clock.json", "b.db"} {
		fi, err := os.Stat(filepath.Join(out, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v mode %v, want 0600", name, err, fi.Mode().Perm())
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 2 {
		t.Fatalf("left behind in the export folder: %v", ents)
	}
}

// TestBackupRefusesWithoutDatabase: no database, no backup, exit 1 and no
// file (it used to create an empty database and say "backup written").
func TestBackupRefusesWithoutDatabase(t *testing.T) {
	e := sqliteEnv(t) // backup is SQLite's (PostgreSQL: pg_dump)
	target := filepath.Join(t.TempDir(), "b.db")
	if code := e.main().Main(context.Background(), []string{"backup", target}); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, e.logs.String())
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) || !strings.Contains(e.logs.String(), "no database") {
		t.Fatalf("backup file %v; stderr %q", err, e.logs.String())
	}
}

// TestClockExportKeepsAnExistingFile: without --force an existing file
// stays as it was (exit 1); --force replaces it.
func TestClockExportKeepsAnExistingFile(t *testing.T) {
	e := newEnv(t)
	if code := e.main().Main(context.Background(), []string{"migrate"}); code != 0 {
		t.Fatal(e.logs.String())
	}
	path := filepath.Join(t.TempDir(), "clock.json")
	os.WriteFile(path, []byte("precious"), 0o600)
	if code := e.main().Main(context.Background(), []string{"clock", "export", path}); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" || !strings.Contains(e.logs.String(), "--force") {
		t.Fatalf("file %q; stderr %q", b, e.logs.String())
	}
	if code := e.main().Main(context.Background(), []string{"clock", "export", "--force", path}); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, e.logs.String())
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"version": 3`)) {
		t.Fatalf("not replaced: %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

// sqliteEnv is newEnv on a SQLite file even when the PostgreSQL pass of CI
// sets KAIROS_TEST_DATABASE_URL.
func sqliteEnv(t *testing.T) *env {
	e := newEnv(t)
	delete(e.vars, "KAIROS_DATABASE_URL")
	return e
}
