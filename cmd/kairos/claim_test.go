package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

var claimLine = regexp.MustCompile(`no operator yet: send /start ([A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}) to your bot`)

// waitLog polls the log (with a deadline) for a match of re.
func waitLog(t *testing.T, e *env, re *regexp.Regexp) []string {
	t.Helper()
	deadline := testkit.GiveUpAt(t)
	for {
		if m := re.FindStringSubmatch(e.logs.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("log never matched %s:\n%s", re, e.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFirstRunClaimsOperator: a first run with no operator logs one claim
// line and writes the code 0600; a wrong code is refused; the right one
// makes the sender an operator stored in the database (access list shows
// it, operator commands answer); the code then works no more.
func TestFirstRunClaimsOperator(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  pairing: true\n"), 0o600)
	e.start()
	code := waitLog(t, e, claimLine)[1]
	if n := strings.Count(e.logs.String(), "no operator yet"); n != 1 {
		t.Fatalf("claim line logged %d times", n)
	}
	if !strings.Contains(e.logs.String(), "no one can talk to the bot") {
		t.Fatalf("the start does not say no one can reach the agent:\n%s", e.logs.String())
	}
	path := filepath.Join(e.vars["KAIROS_DATA_DIR"], claimFile)
	fi, err := os.Stat(path)
	if b, _ := os.ReadFile(path); err != nil || fi.Mode().Perm() != 0o600 || strings.TrimSpace(string(b)) != code {
		t.Fatalf("claim file: %v %q", err, b)
	}

	const me, other = 4242, 4343
	e.tg.PushText(me, me, "/start AAAA-BBBB-CCCC-DDDD", time.Now())
	waitReply(t, e.tg, me, 1, "not valid")
	e.tg.PushText(me, me, "/start "+strings.ToLower(code), time.Now())
	waitReply(t, e.tg, me, 2, "You are now this bot's operator")
	e.tg.PushText(me, me, "/policy", time.Now())
	waitReply(t, e.tg, me, 3, "access")
	e.tg.PushText(other, other, "/start "+code, time.Now())
	waitReply(t, e.tg, other, 1, "pairing code")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("claim file still there: %v", err)
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("the claim reached the model (%d requests)", n)
	}

	list := newEnvLike(e)
	if code := list.main().Main(context.Background(), []string{"access", "list"}); code != 0 {
		t.Fatalf("access list: %d %s", code, list.logs.String())
	}
	if !regexp.MustCompile(`(?m)^4242\toperator\tdatabase \(claimed`).MatchString(list.out.String()) {
		t.Fatalf("access list = %q", list.out.String())
	}
}

// TestNoClaimWithAnOperator: a policy naming an operator gets no claim.
func TestNoClaimWithAnOperator(t *testing.T) {
	e := newEnv(t)
	e.start()
	waitLog(t, e, regexp.MustCompile(`kairos started`))
	if strings.Contains(e.logs.String(), "no operator yet") {
		t.Fatalf("claim offered with an operator in the policy:\n%s", e.logs.String())
	}
	if _, err := os.Stat(filepath.Join(e.vars["KAIROS_DATA_DIR"], claimFile)); !os.IsNotExist(err) {
		t.Fatalf("claim file written: %v", err)
	}
}

// newEnvLike is a second Main environment on the same data and policy.
func newEnvLike(e *env) *env {
	c := &env{t: e.t, tg: e.tg, llm: e.llm, vars: map[string]string{}, logs: &syncBuffer{}, out: &syncBuffer{}}
	for k, v := range e.vars {
		c.vars[k] = v
	}
	return c
}

// TestRevokedOperatorLosesPowersWithoutRestart: an operator claimed with
// /start and then revoked from another process (`kairos access deny`, as
// another replica or the operator's shell would) is no operator for the
// running bot once it reads the database again, without a restart.
func TestRevokedOperatorLosesPowersWithoutRestart(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  pairing: true\n"), 0o600)
	e.start()
	code := waitLog(t, e, claimLine)[1]
	const me = 4242
	e.tg.PushText(me, me, "/start "+code, time.Now())
	waitReply(t, e.tg, me, 1, "You are now this bot's operator")
	e.tg.PushText(me, me, "/policy", time.Now())
	waitReply(t, e.tg, me, 2, "access")

	deny := newEnvLike(e)
	// The last operator is removed only with --force (TestAccessKeepsTheLastOperator).
	if rc := deny.main().Main(context.Background(), []string{"access", "deny", "4242", "--force"}); rc != 0 {
		t.Fatalf("access deny: %d %s%s", rc, deny.out.String(), deny.logs.String())
	}
	ctx := testCtx(t)
	for !strings.Contains(e.logs.String(), "operators changed in the database") {
		select {
		case <-ctx.Done():
			t.Fatalf("the running bot never read the revocation:\n%s", e.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	e.tg.PushText(me, me, "/policy", time.Now())
	if msg := waitReply(t, e.tg, me, 3, ""); !strings.Contains(msg, "pairing code") {
		t.Fatalf("a revoked operator still got: %q", msg)
	}
}
