package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestStartWarnsWhenTheModelKeyIsRefused: a wrong OPENAI_API_KEY is said
// at start, once, in one line naming the variable (not at the first
// turn), without the key.
func TestStartWarnsWhenTheModelKeyIsRefused(t *testing.T) {
	e := newEnv(t)
	e.llm = testkit.NewFakeOpenAI(t, testkit.WithAPIKey("sk-right-key-1234"))
	e.vars["OPENAI_BASE_URL"] = e.llm.URL()
	e.vars["OPENAI_API_KEY"] = "sk-wrong-key-5678"
	e.start()
	waitLog(t, e, regexp.MustCompile("refused the API key at start"))
	logs := e.logs.String()
	if n := strings.Count(logs, "refused the API key at start"); n != 1 || !strings.Contains(logs, "OPENAI_API_KEY") || !strings.Contains(logs, "status=401") {
		t.Fatalf("want one warning naming OPENAI_API_KEY and the 401, got %d:\n%s", n, logs)
	}
	if strings.Contains(logs, "sk-wrong-key-5678") || strings.Contains(logs, "unreachable at start") {
		t.Fatalf("the key in the log, or said unreachable:\n%s", logs)
	}
}

// TestStartWarnsWhenTheModelIsUnreachable: no answer at all is said as
// unreachable, not as a refused key.
func TestStartWarnsWhenTheModelIsUnreachable(t *testing.T) {
	e := newEnv(t)
	e.vars["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1"
	e.start()
	waitLog(t, e, regexp.MustCompile("model endpoint is unreachable at start"))
	logs := e.logs.String()
	if strings.Contains(logs, "refused the API key") {
		t.Fatalf("an unreachable endpoint said as a refused key:\n%s", logs)
	}
}
