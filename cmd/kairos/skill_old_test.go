package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/store"
)

// A database from before the skills tables (read-only, so never migrated
// by these commands) has no skills: list prints [], show and export say
// there is no such skill rather than failing on the missing table.
func TestSkillCommandsOnDatabaseWithoutSkillsTables(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE skill_versions", "DROP TABLE skills"} {
		if err := db.Gorm().Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if out := strings.TrimSpace(e.runCLI(t, "skill", "list")); out != "[]" {
		t.Fatalf("skill list = %q, want []", out)
	}
	for _, args := range [][]string{{"skill", "show", "double"}, {"skill", "export", "double"}} {
		e.logs.Reset()
		if code := e.main().Main(ctx, args); code == 0 {
			t.Fatalf("%v succeeded", args)
		}
		if msg := e.logs.String(); !strings.Contains(msg, `no skill named "double"`) || strings.Contains(msg, "no such table") {
			t.Fatalf("%v said %q", args, msg)
		}
	}
}
