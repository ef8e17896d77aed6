package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryHelpSaysExitStatusOnce: each command's help has one "Exit
// status" line (token's help had two that disagreed).
func TestEveryHelpSaysExitStatusOnce(t *testing.T) {
	for _, c := range sortedCommands() {
		e := newEnv(t)
		args := append(strings.Fields(c.Name), "--help")
		if code := e.main().Main(context.Background(), args); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if n := strings.Count(e.out.String(), "Exit status"); n != 1 {
			t.Errorf("kairos %s --help says \"Exit status\" %d times:\n%s", c.Name, n, e.out.String())
		}
	}
}

// TestPolicyCheckWithNoFileChecksTheDefaults: with no file at the default
// path the built-in defaults apply, as for `kairos run`; policy check
// says so and exits 0 (it said "no such file" and exited 1). A file named
// on the command line or by KAIROS_POLICY must exist.
func TestPolicyCheckWithNoFileChecksTheDefaults(t *testing.T) {
	parallel(t)
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, tc := range []struct {
		name   string
		policy string // KAIROS_POLICY, "" unset
		args   []string
		code   int
		want   string
	}{
		{"default path", "", []string{"policy", "check"}, 0, "./policy.yaml: no such file; the built-in defaults apply (as `kairos run` uses them): ok"},
		{"KAIROS_POLICY names no file", missing, []string{"policy", "check"}, 1, missing + ": no such file"},
		{"FILE names no file", "", []string{"policy", "check", missing}, 1, missing + ": no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if _, err := os.Stat("policy.yaml"); err == nil {
				t.Skip("the package folder has a policy.yaml: the default path is not absent")
			}
			delete(e.vars, "KAIROS_POLICY") // ./policy.yaml: the package folder has none
			if tc.policy != "" {
				e.vars["KAIROS_POLICY"] = tc.policy
			}
			code := e.main().Main(context.Background(), tc.args)
			if code != tc.code || !strings.Contains(e.out.String(), tc.want) {
				t.Fatalf("exit %d (want %d), stdout %q, want %q", code, tc.code, e.out.String(), tc.want)
			}
		})
	}
}
