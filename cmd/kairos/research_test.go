package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// researchEnv is a bot with an offline folder, a SearXNG and a web page
// server on loopback (allow-listed), and a model that plays the research
// roles with testkit.ResearchScript and, in a normal turn, calls the
// research tool when asked to.
func researchEnv(t *testing.T, extra string) (*env, string) {
	t.Helper()
	e := newEnv(t)
	docs := t.TempDir()
	os.WriteFile(filepath.Join(docs, "kestrel.md"), []byte("# Kestrel River\nThe Kestrel River is 412 kilometres long and rises in the Varn Hills.\n"), 0o644)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><meta name="date" content="2026-01-10"></head><body><p>The Harlow Bridge opened in 1911 after six years of work.</p></body></html>`)
	}))
	t.Cleanup(pages.Close)
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]any{
			{"title": "Harlow Bridge", "url": pages.URL + "/harlow", "content": "The Harlow Bridge, a history."}}})
	}))
	t.Cleanup(searx.Close)
	e.vars["KAIROS_SEARCH_URL"] = searx.URL
	policy := fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\nresearch:\n  offline:\n    dir: %s\n  web:\n    allow_list: [127.0.0.1]\n%s",
		operatorID, docs, extra)
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte(policy), 0o600)
	script := &testkit.ResearchScript{}
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		sys := r.SystemPrompt()
		if strings.Contains(sys, "ROLE:") || strings.Contains(sys, "research assistant") {
			return testkit.Reply{Text: script.Reply(sys, r.LastUserMessage()), Usage: &testkit.Usage{PromptTokens: 100, CompletionTokens: 20}}
		}
		if res := r.ToolResults(); len(res) > 0 {
			return testkit.TextReply("done: " + res[len(res)-1].Content)
		}
		if q, ok := strings.CutPrefix(r.LastUserMessage(), "research please: "); ok {
			args, _ := json.Marshal(map[string]string{"question": q})
			return testkit.ToolReply(testkit.ToolCall{Name: "research", Arguments: string(args)})
		}
		return testkit.TextReply("ok")
	})
	return e, docs
}

// /research answers with numbered sources, a confidence and the spend;
// /research alone shows the last trace; the model's research tool call
// goes through the agent and reads the allowed web; every role's call is
// counted in the user's usage.
func TestResearchThroughMain(t *testing.T) {
	e, _ := researchEnv(t, "")
	read := e.apiToken(t, "read", "research")
	addr := e.start()
	user := int64(2002)
	e.tg.PushText(user, user, "/research How long is the Kestrel River?", time.Now())
	got := waitReply(t, e.tg, user, 1, "Sources")
	for _, want := range []string{"412", "[1]", "*Confidence:* medium", "kestrel.md", "Tiers: offline", "model calls"} {
		if !strings.Contains(got, want) && !strings.Contains(got, strings.ReplaceAll(want, "*", "")) {
			t.Fatalf("the /research answer lacks %q:\n%s", want, got)
		}
	}
	e.tg.PushText(user, user, "/research", time.Now())
	got = waitReply(t, e.tg, user, 2, "Last research")
	if !strings.Contains(got, "How long is the Kestrel River") || !strings.Contains(got, "Trace:") {
		t.Fatalf("the last trace:\n%s", got)
	}
	code, body := apiCall(t, "GET", "http://"+addr+"/api/v1/research?user=telegram:2002", read, "", nil)
	items, _ := body["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("GET /api/v1/research: %d %v", code, body)
	}
	tr := items[0].(map[string]any)
	if tr["question"] != "How long is the Kestrel River?" || tr["status"] != "answered" || tr["answer"].(map[string]any)["trace_id"] != tr["id"] {
		t.Fatalf("the API's trace: %v", tr)
	}
	e.tg.PushText(user, user, "research please: When did the Harlow Bridge open?", time.Now())
	got = waitReply(t, e.tg, user, 3, "done:")
	if !strings.Contains(got, "1911") || !strings.Contains(got, `"tier":"web"`) {
		t.Fatalf("the tool's answer:\n%s", got)
	}
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Usage commits with the update's completion, just after the reply.
	var traces, calls int64
	for deadline := testkit.GiveUpAt(t); ; {
		db.Gorm().Table("research_traces").Where("user_key = ?", "telegram:2002").Count(&traces)
		db.Gorm().Table("token_usage").Where("user_key = ?", "telegram:2002").Count(&calls)
		if traces == 2 && calls >= 8 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if traces != 2 || calls < 8 {
		var kinds []string
		db.Gorm().Table("token_usage").Pluck("kind || ':' || user_key", &kinds)
		t.Fatalf("%d traces and %d usage rows for the user, want 2 and 8 (3 roles twice, 2 turn calls): %v", traces, calls, kinds)
	}
}

// research.enabled: false removes the tool and the command.
func TestResearchDisabledIsAbsent(t *testing.T) {
	e, _ := researchEnv(t, "  enabled: false\n")
	e.start()
	user := int64(2002)
	e.tg.PushText(user, user, "/research How long is the Kestrel River?", time.Now())
	got := waitReply(t, e.tg, user, 1, "/research")
	if !strings.Contains(got, "I don't know the command /research") {
		t.Fatalf("a disabled /research answered:\n%s", got)
	}
	e.tg.PushText(user, user, "hello", time.Now())
	waitReply(t, e.tg, user, 2, "ok")
	if e.llm.LastRequest().HasTool("research") {
		t.Fatal("the research tool is offered with research disabled")
	}
}
