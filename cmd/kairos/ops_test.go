package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("clock:\n  mode: normal\n"), 0o600)
	os.WriteFile(bad, []byte("clock:\n  mode: loud\nclokc: 1\n"), 0o600)
	for _, tc := range []struct {
		file string
		code int
		want []string
	}{
		{good, 0, []string{"ok"}},
		{bad, 1, []string{"bad.yaml:2:9:", "bad.yaml:3:1:", "clokc"}},
		{filepath.Join(dir, "missing.yaml"), 1, []string{"no such file"}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			e := newEnv(t)
			if code := e.main().Main(context.Background(), []string{"policy", "check", tc.file}); code != tc.code {
				t.Fatalf("exit %d, want %d; out %q err %q", code, tc.code, e.out.String(), e.logs.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(e.out.String(), w) {
					t.Fatalf("output %q lacks %q", e.out.String(), w)
				}
			}
		})
	}
}

func TestAccessAndBackupCommands(t *testing.T) {
	e := newEnv(t)
	if os.Getenv("KAIROS_TEST_DATABASE_URL") != "" {
		delete(e.vars, "KAIROS_DATABASE_URL") // backup is SQLite's
	}
	run := func(args ...string) (int, string) {
		e.out.Reset()
		return e.main().Main(context.Background(), args), e.out.String()
	}
	if code, out := run("access", "allow", "4242"); code != 0 || !strings.Contains(out, "4242: allowed") {
		t.Fatalf("allow: %d %q %s", code, out, e.logs.String())
	}
	if code, out := run("access", "list"); code != 0 || !strings.Contains(out, "4242\tallowed\tdatabase") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, _ := run("access", "allow", "abc"); code != 2 {
		t.Fatalf("allow abc exit %d, want 2", code)
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if code, _ := run("backup", path); code != 0 {
		t.Fatalf("backup exit %d: %s", code, e.logs.String())
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
}
