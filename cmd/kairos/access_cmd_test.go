package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/store"
)

// TestAccessCommandSaysWhatItDoes: `kairos access deny` cannot remove a
// user the policy file allows, nor one never allowed, and says so with
// exit 1; `access list` shows every grant with where it comes from.
func TestAccessCommandSaysWhatItDoes(t *testing.T) {
	e := newEnv(t) // policy: operators [operatorID], allowed_users [2002]
	run := func(args ...string) (int, string, string) {
		e.out.Reset()
		e.logs.Reset()
		code := e.main().Main(context.Background(), args)
		return code, e.out.String(), e.logs.String()
	}
	steps := []struct {
		args     []string
		wantCode int
		want     string // in stdout or stderr
	}{
		{[]string{"access", "deny", "2002"}, 1, "cannot remove a policy grant"},
		{[]string{"access", "deny", fmt.Sprint(operatorID)}, 1, "access.operators"},
		{[]string{"access", "deny", "9999"}, 1, "user 9999 is not allowed"},
		{[]string{"access", "allow", "2002"}, 0, "already allowed by the policy file"},
		{[]string{"access", "allow", "4242"}, 0, "4242: allowed"},
		{[]string{"access", "deny", "4242"}, 0, "4242: removed"},
		{[]string{"access", "deny", "4242"}, 1, "user 4242 is not allowed now"},
		{[]string{"access", "allow", "4243"}, 0, "4243: allowed"},
	}
	for _, s := range steps {
		code, out, errOut := run(s.args...)
		if code != s.wantCode || !strings.Contains(out+errOut, s.want) {
			t.Fatalf("%v: exit %d (want %d), out %q, err %q, want %q", s.args, code, s.wantCode, out, errOut, s.want)
		}
	}
	// A user an operator paired with /pair.
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.NewUpdateLog(db).GrantAccess(context.Background(), 5150, operatorID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, errOut := run("access", "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("%d\toperator\tpolicy file", operatorID),
		"2002\tallowed\tpolicy file",
		"(access.allowed_users)",
		"4243\tallowed\tdatabase (kairos access allow",
		fmt.Sprintf("5150\tallowed\tpairing (approved by operator %d", operatorID),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "4242") {
		t.Errorf("list still shows the removed user 4242:\n%s", out)
	}
}

// TestAccessBadIDTouchesNoDatabase: a mistyped ID is a usage error found
// before the database is opened, so it neither creates nor migrates one.
func TestAccessBadIDTouchesNoDatabase(t *testing.T) {
	e := newEnv(t)
	if code := e.main().Main(context.Background(), []string{"access", "allow", "abc"}); code != 2 {
		t.Fatalf("exit %d, want 2; err %q", code, e.logs.String())
	}
	if !strings.Contains(e.logs.String()+e.out.String(), `not "abc"`) {
		t.Fatalf("no word about the bad id: %q", e.logs.String())
	}
	if _, err := os.Stat(filepath.Join(e.vars["KAIROS_DATA_DIR"], "kairos.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the database file exists after a usage error (stat: %v)", err)
	}
}
