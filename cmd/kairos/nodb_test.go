package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noDatabaseArgs runs every command of the table in an empty folder with
// arguments that find nothing there. A command missing here fails
// TestEveryCommandWithNoDatabase: a new command must say what it does
// with no database. writes marks the commands whose work is to create
// or change the database (they may create it).
var noDatabaseArgs = map[string]struct {
	args   []string
	writes bool
	skip   string // why the command is not run here
}{
	"run":            {skip: "serves until stopped (TestFailedStart*)"},
	"chat":           {writes: true, args: []string{"chat"}},
	"migrate":        {writes: true, args: []string{"migrate"}},
	"version":        {args: []string{"version"}},
	"policy check":   {args: []string{"policy", "check"}},
	"clock export":   {args: []string{"clock", "export"}},
	"clock import":   {args: []string{"clock", "import", "missing.json"}},
	"clock parse":    {args: []string{"clock", "parse", "9am", "--tz", "UTC"}},
	"cell run":       {args: []string{"cell", "run", "missing.js"}},
	"backup":         {args: []string{"backup", "b.db"}},
	"backup check":   {args: []string{"backup", "check", "missing.db"}},
	"restore":        {args: []string{"restore", "missing.db"}},
	"access allow":   {writes: true, args: []string{"access", "allow", "77"}},
	"access deny":    {args: []string{"access", "deny", "77"}},
	"access list":    {args: []string{"access", "list"}},
	"schedule list":  {args: []string{"schedule", "list"}},
	"mcp check":      {args: []string{"mcp", "check"}},
	"model check":    {args: []string{"model", "check"}},
	"skill list":     {args: []string{"skill", "list"}},
	"skill show":     {args: []string{"skill", "show", "x"}},
	"skill rollback": {writes: true, args: []string{"skill", "rollback", "x"}},
	"skill disable":  {writes: true, args: []string{"skill", "disable", "x"}},
	"skill enable":   {writes: true, args: []string{"skill", "enable", "x"}},
	"skill share":    {writes: true, args: []string{"skill", "share", "x"}},
	"skill unshare":  {writes: true, args: []string{"skill", "unshare", "x"}},
	"skill export":   {args: []string{"skill", "export", "x"}},
	"skill import":   {writes: true, args: []string{"skill", "import", "missing.json", "--user", "5"}},
	"token create":   {writes: true, args: []string{"token", "create", "--scope", "read"}},
	"token list":     {args: []string{"token", "list"}},
	"token revoke":   {args: []string{"token", "revoke", "abc"}},
	"usage":          {args: []string{"usage"}},
	"completion":     {args: []string{"completion", "bash"}},
	"doctor":         {args: []string{"doctor"}},
}

// TestEveryCommandWithNoDatabase: in an empty folder, a command that
// only reads, or finds nothing to change, creates no data folder and no
// database (token list, token revoke, access deny and clock import of a
// missing file created data/kairos.db and migrated it).
func TestEveryCommandWithNoDatabase(t *testing.T) {
	for name := range noDatabaseArgs {
		if commands[name] == nil {
			t.Errorf("noDatabaseArgs names %q, which is no command", name)
		}
	}
	for _, c := range sortedCommands() {
		tc, ok := noDatabaseArgs[c.Name]
		if !ok {
			t.Errorf("command %q is not in noDatabaseArgs: say what it does with no database", c.Name)
			continue
		}
		if tc.skip != "" || tc.writes {
			continue
		}
		t.Run(strings.ReplaceAll(c.Name, " ", "_"), func(t *testing.T) {
			e := sqliteEnv(t)
			wd := t.TempDir()
			t.Chdir(wd)
			e.vars["KAIROS_DATA_DIR"] = filepath.Join(wd, "data")
			e.main().Main(context.Background(), tc.args)
			if _, err := os.Stat(e.vars["KAIROS_DATA_DIR"]); !os.IsNotExist(err) {
				t.Fatalf("%v created the data folder (%v):\n%s", tc.args, err, e.logs.String())
			}
			if ents, _ := os.ReadDir(wd); len(ents) != 0 {
				t.Fatalf("%v left %v in the working folder", tc.args, ents)
			}
		})
	}
}

// TestNoDatabaseOneAnswer: with no database yet every listing answers as
// it would on an empty database, exit 0, and says on stderr that there
// is none (schedule list and clock export exited 1 while usage and skill
// list printed []); the commands that would change something exit 1 and
// say that nothing changed.
func TestNoDatabaseOneAnswer(t *testing.T) {
	parallel(t)
	reads := [][]string{{"schedule", "list"}, {"clock", "export"}, {"usage"}, {"skill", "list"}, {"token", "list"}}
	for _, args := range reads {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			e := sqliteEnv(t)
			if code := e.main().Main(context.Background(), args); code != 0 {
				t.Fatalf("%v: exit %d, want 0:\n%s", args, code, e.logs.String())
			}
			if !json.Valid([]byte(e.out.String())) {
				t.Fatalf("%v: stdout is not JSON: %q", args, e.out.String())
			}
			if !strings.Contains(e.logs.String(), "no database yet") {
				t.Fatalf("%v: stderr does not say there is no database: %q", args, e.logs.String())
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"token", "revoke", "abc"}, 1, "nothing changed"},
		{[]string{"access", "deny", "77"}, 1, "nothing changed"},
		{[]string{"clock", "import", filepath.Join(t.TempDir(), "missing.json")}, 2, "nothing imported"},
		{[]string{"clock", "import", bad}, 2, "nothing imported"},
	} {
		t.Run(strings.Join(tc.args[:2], "_"), func(t *testing.T) {
			e := sqliteEnv(t)
			code := e.main().Main(context.Background(), tc.args)
			if code != tc.code || !strings.Contains(e.logs.String(), tc.want) {
				t.Fatalf("%v: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, e.logs.String(), tc.want)
			}
			if _, err := os.Stat(e.vars["KAIROS_DATA_DIR"]); !os.IsNotExist(err) {
				t.Fatalf("%v created the data folder", tc.args)
			}
		})
	}
}
