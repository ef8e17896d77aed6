package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestConfigErrorsNameTheVariable: every invalid value exits 2 naming its
// variable before anything starts (no data directory is created).
func TestConfigErrorsNameTheVariable(t *testing.T) {
	parallel(t)
	for _, tc := range []struct{ key, val string }{
		{"KAIROS_LOG_LEVEL", "verbose"},
		{"KAIROS_WORKERS", "0"},
		{"KAIROS_WORKERS", "eight"},
		{"OPENAI_BASE_URL", "localhost:11434/v1"},
		{"OPENAI_BASE_URL", "ftp://models.example/v1"},
		{"TELEGRAM_API_URL", "api.telegram.org"},
		{"KAIROS_HTTP_ADDR", "8080"},
		{"KAIROS_HTTP_ADDR", "127.0.0.1:99999"},
		{"KAIROS_POLICY", "/nonexistent/policy.yaml"},
		{"KAIROS_DATABASE_URL", "mysql://root:hunter22@db/kairos"},
	} {
		for _, cmd := range []string{"run", "chat"} {
			t.Run(cmd+"_"+tc.key+"="+tc.val, func(t *testing.T) {
				e := newEnv(t)
				e.vars[tc.key] = tc.val
				if code := e.main().Main(context.Background(), []string{cmd}); code != 2 {
					t.Fatalf("exit %d, want 2; stderr %q", code, e.logs.String())
				}
				lines := strings.Split(strings.TrimSpace(e.logs.String()), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], tc.key) {
					t.Fatalf("want one line naming %s, got %q", tc.key, e.logs.String())
				}
				if strings.Contains(e.logs.String(), "hunter22") {
					t.Fatalf("password shown: %q", e.logs.String())
				}
				if _, err := os.Stat(e.vars["KAIROS_DATA_DIR"]); !os.IsNotExist(err) {
					t.Fatalf("data dir created before the configuration was checked: %v", err)
				}
			})
		}
	}
}

// TestUnreachableDatabaseIsOneLine: pgx reports every address it tried on
// its own line; the operator gets one, without the password.
func TestUnreachableDatabaseIsOneLine(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_DATABASE_URL"] = "postgres://kairos:hunter22@127.0.0.1:1/kairos?connect_timeout=5"
	if code := e.main().Main(context.Background(), []string{"migrate"}); code != 1 {
		t.Fatalf("exit %d, want 1: %q", code, e.logs.String())
	}
	out := strings.TrimSpace(e.logs.String())
	if strings.Count(out, "\n") != 0 || !strings.Contains(out, "open database") || strings.Contains(out, "hunter22") {
		t.Fatalf("want one line without the password, got %q", out)
	}
}

// TestDefaultPolicyPathMayBeAbsent: without KAIROS_POLICY a missing
// ./policy.yaml means the built-in defaults, said once in the log.
func TestDefaultPolicyPathMayBeAbsent(t *testing.T) {
	e := newEnv(t)
	delete(e.vars, "KAIROS_POLICY")
	t.Chdir(t.TempDir())
	e.llm.Enqueue(testkit.TextReply("hi"))
	m := e.main()
	m.Stdin = strings.NewReader("hello\n")
	if code := m.Main(context.Background(), []string{"chat", "-v"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	if n := strings.Count(e.logs.String(), "no policy file"); n != 1 {
		t.Fatalf("'no policy file' logged %d times:\n%s", n, e.logs.String())
	}
}

// TestStartWarnsWhenSearchDoesNotAnswer: one warning at start naming the
// variable, when SearXNG is not there.
func TestStartWarnsWhenSearchDoesNotAnswer(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_SEARCH_URL"] = "http://127.0.0.1:1"
	e.start()
	deadline := testkit.GiveUpAt(t)
	for !strings.Contains(e.logs.String(), "search backend does not answer") {
		if time.Now().After(deadline) {
			t.Fatalf("no search warning:\n%s", e.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(e.logs.String(), "KAIROS_SEARCH_URL") {
		t.Fatalf("warning does not name the variable:\n%s", e.logs.String())
	}
	// Once: the probe's own provider warning came first (two lines).
	n := 0
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(strings.ToLower(l), "search") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d search warnings at start, want 1:\n%s", n, e.logs.String())
	}
}
