package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -tags sqlite_fts5 ./cmd/kairos -run Golden -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Fatalf("%s changed (-want +got):\n%s\nrun with -update if intended", path, diff)
	}
}

// TestGoldenPromptAndTools pins the system prompt and the tool schemas the
// model receives on a plain first message, and every built-in tool's
// schema (a message that names them all is offered them all), and keeps
// the plain message's fixed overhead small (seed 003: minimal surface
// area; issue 36: a plain message sends what it needs).
func TestGoldenPromptAndTools(t *testing.T) {
	e := newEnv(t)
	delete(e.vars, "TELEGRAM_BOT_TOKEN")
	e.llm.Enqueue(testkit.TextReply("ok"), testkit.TextReply("ok"))
	c := e.openCore(t)
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	if err := c.agent.HandleMessage(context.Background(), cliMessage("hello", at), &terminal{w: e.out}); err != nil {
		t.Fatal(err)
	}
	req := e.llm.LastRequest()
	tools, _ := json.MarshalIndent(req.Tools, "", "  ")
	golden(t, "system_prompt", req.SystemPrompt())
	golden(t, "tools", string(tools))

	compact, _ := json.Marshal(req.Tools)
	sys, tl := agent.EstimateTokens(req.SystemPrompt()), agent.EstimateTokens(string(compact))
	t.Logf("fixed overhead: system prompt %d + tool schemas %d = %d tokens (estimate)", sys, tl, sys+tl)
	// 1600 while every built-in tool was offered to every message.
	if sys+tl > 700 {
		t.Errorf("fixed overhead %d tokens, budget 700", sys+tl)
	}
	if !strings.Contains(req.SystemPrompt(), "2026-11-21T09:00:00") {
		t.Error("the system prompt lacks the clock envelope")
	}

	named := "hello: search, memory, code, schedule, skill, research"
	if err := c.agent.HandleMessage(context.Background(), cliMessage(named, at.Add(time.Minute)), &terminal{w: e.out}); err != nil {
		t.Fatal(err)
	}
	all, _ := json.MarshalIndent(e.llm.LastRequest().Tools, "", "  ")
	golden(t, "all_tools", string(all))
}
