package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// setFeatures writes the env's policy with the given features block
// (YAML lines under `features:`).
func (e *env) setFeatures(lines ...string) {
	e.t.Helper()
	body := "access:\n  operators: [1001]\n  allowed_users: [2002]\nfeatures:\n"
	for _, l := range lines {
		body += "  " + l + "\n"
	}
	if err := os.WriteFile(e.vars["KAIROS_POLICY"], []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// cellRun runs `kairos cell run` on src and returns the exit code, the
// result's output as JSON text, and stdout+stderr.
func (e *env) cellRun(src string) (int, string, string) {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), "cell.js")
	os.WriteFile(path, []byte(src), 0o600)
	e.out.Reset()
	e.logs.Reset()
	code := e.main().Main(context.Background(), []string{"cell", "run", path})
	var res struct {
		Output json.RawMessage `json:"output"`
	}
	json.Unmarshal([]byte(e.out.String()), &res)
	var compact bytes.Buffer
	json.Compact(&compact, res.Output)
	return code, compact.String(), e.out.String() + e.logs.String()
}

// offeredTools starts Kairos, sends one message and returns the request
// the model got: the tools it was offered and their descriptions.
func (e *env) offeredTools() testkit.ChatRequest {
	e.t.Helper()
	e.llm.Enqueue(testkit.TextReply("Hello."))
	e.start()
	// The message names every on-demand tool, so each one that exists is
	// offered (tools.Offered).
	e.tg.PushText(2002, 2002, "hi: code, schedule, skill, research", time.Now())
	waitReply(e.t, e.tg, 2002, 1, "Hello")
	reqs := e.llm.Requests()
	if len(reqs) == 0 {
		e.t.Fatal("the model was never asked")
	}
	return reqs[0]
}

// TestFeatureCLIExecOff: features.cli_exec false removes the code tool
// from what the model is offered and `kairos cell run` refuses, running
// nothing (exit 2, one sentence naming the flag).
func TestFeatureCLIExecOff(t *testing.T) {
	on := newEnv(t)
	if req := on.offeredTools(); !req.HasTool("code") {
		t.Fatalf("default policy: code missing from %v", req.ToolNames())
	}
	e := newEnv(t)
	e.setFeatures("cli_exec: false")
	code, _, _ := e.cellRun("output(1)")
	var said []string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.HasPrefix(l, "kairos:") {
			said = append(said, l)
		}
	}
	if code != 2 || e.out.String() != "" || len(said) != 1 || !strings.Contains(said[0], "features.cli_exec is false") {
		t.Fatalf("cell run: exit %d, stdout %q, said %q; want exit 2 with one sentence", code, e.out.String(), said)
	}
	req := e.offeredTools()
	if req.HasTool("code") {
		t.Fatalf("cli_exec false: code offered: %v", req.ToolNames())
	}
	if !req.HasTool("memory") {
		t.Fatalf("cli_exec false removed other tools: %v", req.ToolNames())
	}
}

// TestFeatureCredentialsAccess: without features.credentials_access a cell
// has no getSecret or listSecrets (whether run by `kairos cell run` or by
// the model's code tool), and the code tool's description names no
// secret; with it, both exist.
func TestFeatureCredentialsAccess(t *testing.T) {
	parallel(t)
	// Names built at run time: a literal getSecret would (rightly) ask
	// for the code.secrets approval.
	const probe = `output({g: typeof globalThis["get" + "Secret"], l: typeof globalThis["list" + "Secrets"]})`
	for _, tc := range []struct {
		name  string
		flag  string
		want  string
		named bool
	}{
		{"off (the default)", "credentials_access: false", `{"g":"undefined","l":"undefined"}`, false},
		{"on", "credentials_access: true", `{"g":"function","l":"function"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["KAIROS_SECRET_API_KEY"] = "sk-feature-secret-123"
			e.setFeatures(tc.flag)
			if code, got, out := e.cellRun(probe); code != 0 || got != tc.want {
				t.Fatalf("cell run: exit %d, output %s, want %s: %s", code, got, tc.want, out)
			}
			e.llm.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "code", Arguments: `{"action":"execute","code":` + string(mustJSON(probe)) + `}`}),
				testkit.TextReply("Done."))
			e.start()
			e.tg.PushText(2002, 2002, "which helpers do cells have?", time.Now())
			waitReply(t, e.tg, 2002, 1, "Done")
			reqs := e.llm.Requests()
			res := reqs[1].ToolResults()
			if len(res) != 1 || !strings.Contains(strings.ReplaceAll(res[0].Content, `\"`, `"`), strings.Trim(tc.want, "{}")) {
				t.Fatalf("code tool result %+v, want %s", res, tc.want)
			}
			var desc string
			for _, td := range reqs[0].Tools {
				if td.Name == "code" {
					desc = td.Description
				}
			}
			if named := strings.Contains(desc, "API_KEY") && strings.Contains(desc, "getSecret"); named != tc.named {
				t.Fatalf("code description names the secret: %v, want %v: %s", named, tc.named, desc)
			}
		})
	}
}

// TestFeatureSelfUpdateOff: features.self_update false offers no skill
// tool and no skill__* tool.
func TestFeatureSelfUpdateOff(t *testing.T) {
	e := newEnv(t)
	e.setFeatures("self_update: false")
	for _, name := range e.offeredTools().ToolNames() {
		if name == "skill" || strings.HasPrefix(name, "skill__") {
			t.Fatalf("self_update false: %s offered", name)
		}
	}
}

// TestFeatureNetworkOff: features.network false (the default) leaves a
// cell no network call at all.
func TestFeatureNetworkOff(t *testing.T) {
	e := newEnv(t)
	e.setFeatures("network: false")
	src := "output([typeof fetch, typeof getJSON, typeof postJSON, typeof fetchWithAuth].join())"
	if code, got, out := e.cellRun(src); code != 0 || got != `"undefined,undefined,undefined,undefined"` {
		t.Fatalf("cell run: exit %d, output %s: %s", code, got, out)
	}
}

// TestFeaturesWithoutSurfaceAreErrors: ui_automation and peer_sync have
// nothing in Kairos to turn on; true is a policy error with its position.
func TestFeaturesWithoutSurfaceAreErrors(t *testing.T) {
	e := newEnv(t)
	e.setFeatures("ui_automation: true", "peer_sync: true")
	e.out.Reset()
	e.logs.Reset()
	code := e.main().Main(context.Background(), []string{"policy", "check", e.vars["KAIROS_POLICY"]})
	out := e.out.String() + e.logs.String()
	if code != 1 || !strings.Contains(out, "policy.yaml:5:18: features.ui_automation") || !strings.Contains(out, "policy.yaml:6:14: features.peer_sync") {
		t.Fatalf("policy check: exit %d: %s", code, out)
	}
}

// TestFeatureCLIExecOffWatchingCells: with features.cli_exec false a
// watching cell that comes due runs no code and says nothing, and its
// firing is not retried as a failure.
func TestFeatureCLIExecOffWatchingCells(t *testing.T) {
	e := newEnv(t)
	e.setFeatures("cli_exec: false")
	const user = 2002
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0)
	due := time.Now().Add(-time.Second)
	e.seedSchedules(t, &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: thread, Kind: kairos.ScheduleCell,
		Code: `output({notify: "cells are on"})`, TZ: "UTC", NextRun: due, Start: due.UTC().Format("2006-01-02T15:04:05")})
	e.start()
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"],
		DatabaseURL: e.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFor(t, "the firing finished", func() bool {
		return count(t, db, "schedule_firings", "status <> ?", "pending") > 0 && count(t, db, "schedule_firings", "status = ?", "pending") == 0
	})
	if n := count(t, db, "schedule_firings", "status = ?", kairos.FiringFailed); n != 0 {
		t.Errorf("%d firings failed", n)
	}
	if n := count(t, db, "code_executions", "1 = 1"); n != 0 {
		t.Errorf("%d cells ran", n)
	}
	for _, m := range e.tg.SentTo(user) {
		if strings.Contains(m.LastText(), "cells are on") {
			t.Fatalf("the watching cell spoke: %q", m.LastText())
		}
	}
	// Nor can the model create one.
	e.llm.Enqueue(testkit.ToolReply(testkit.ToolCall{Name: "schedule",
		Arguments: `{"action":"create","when":"in 2 hours","code":"output({notify: 'x'})"}`}), testkit.TextReply("Noted."))
	e.tg.PushText(user, user, "watch the price for me", time.Now())
	waitReply(t, e.tg, user, 1, "Noted")
	reqs := e.llm.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 1 || !strings.Contains(res[0].Content, "watching cells are off") {
		t.Fatalf("schedule create with code: %+v", res)
	}
}
