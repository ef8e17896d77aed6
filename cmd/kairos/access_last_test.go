package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestAccessKeepsTheLastOperator: denying the last operator is refused
// without --force and changes nothing (it succeeded with no warning, and
// only a restart with a new claim code made an operator again); `access
// allow ID --operator` makes one on the host.
func TestAccessKeepsTheLastOperator(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  pairing: true\n"), 0o600) // no operator in the file
	run := func(args ...string) (int, string) {
		e.out.Reset()
		e.logs.Reset()
		code := e.main().Main(context.Background(), args)
		return code, e.out.String() + e.logs.String()
	}
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"access", "allow", "7", "--operator"}, 0, "user 7: operator"},
		{[]string{"access", "list"}, 0, "7\toperator\tdatabase"},
		{[]string{"access", "deny", "7"}, 1, "user 7 is the last operator"},
		{[]string{"access", "list"}, 0, "7\toperator\tdatabase"},
		{[]string{"access", "allow", "8", "--operator"}, 0, "user 8: operator"},
		{[]string{"access", "deny", "7"}, 0, "user 7: removed"},
		{[]string{"access", "deny", "8"}, 1, "nothing changed (--force removes them anyway"},
		{[]string{"access", "deny", "8", "--force"}, 0, "user 8: removed"},
		{[]string{"access", "list"}, 0, "no users are allowed"},
		{[]string{"access", "allow", "9"}, 0, "user 9: allowed"},
		{[]string{"access", "allow", "9", "--operator"}, 0, "user 9: operator"},
		{[]string{"access", "list"}, 0, "9\toperator"},
	}
	for _, s := range steps {
		code, out := run(s.args...)
		if code != s.code || !strings.Contains(out, s.want) {
			t.Fatalf("%v: exit %d (want %d), output %q, want %q", s.args, code, s.code, out, s.want)
		}
	}
}
