package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

func TestCellRunCommand(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, src string
		code      int
		check     func(t *testing.T, res map[string]any)
	}{
		{"output", "const x = await Promise.resolve(6 * 7); output({answer: x});", 0, func(t *testing.T, res map[string]any) {
			if res["success"] != true || !strings.Contains(string(mustJSON(res["output"])), "42") {
				t.Fatalf("result %v", res)
			}
		}},
		{"secret is redacted", "const k = `${getSecret('API_KEY')}`; console.log(k.split('').join(' ')); output({k});", 0, func(t *testing.T, res map[string]any) {
			raw := string(mustJSON(res))
			if strings.Contains(raw, "sk-cell-secret-987") || !strings.Contains(raw, "REDACTED") {
				t.Fatalf("secret not redacted: %s", raw)
			}
		}},
		{"direct leak is rejected", "console.log('key=' + getSecret('API_KEY'));", 1, func(t *testing.T, res map[string]any) {
			if res["error_category"] != "rejected" {
				t.Fatalf("result %v", res)
			}
		}},
		{"syntax error", "let = ;", 1, func(t *testing.T, res map[string]any) {
			if res["success"] != false || res["error_category"] != "syntax" {
				t.Fatalf("result %v", res)
			}
		}},
		{"no host files", "const fs = typeof require; output(fs);", 0, func(t *testing.T, res map[string]any) {
			if !strings.Contains(string(mustJSON(res["output"])), "undefined") {
				t.Fatalf("result %v", res)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["KAIROS_SECRET_API_KEY"] = "sk-cell-secret-987"
			e.setFeatures("credentials_access: true")
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".js")
			os.WriteFile(path, []byte(tc.src), 0o600)
			if code := e.main().Main(context.Background(), []string{"cell", "run", path}); code != tc.code {
				t.Fatalf("exit %d, want %d: %s %s", code, tc.code, e.out.String(), e.logs.String())
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(e.out.String()), &res); err != nil {
				t.Fatalf("output %q: %v", e.out.String(), err)
			}
			tc.check(t, res)
		})
	}
}

// The model's code call runs in a real cell and the result goes back.
func TestCodeToolRunsInRealCell(t *testing.T) {
	e := newEnv(t)
	e.llm.Enqueue(
		testkit.ToolReply(testkit.ToolCall{Name: "code", Arguments: `{"action":"execute","code":"let s = 0; for (let i = 1; i <= 10; i++) s += i; output({sum: s});"}`}),
		testkit.TextReply("The sum is 55."),
	)
	e.start()
	e.tg.PushText(2002, 2002, "compute the sum of 1..10 with code", time.Now())
	waitReply(t, e.tg, 2002, 1, "55")
	res := e.llm.Requests()[1].ToolResults()
	if len(res) != 1 || !strings.Contains(res[0].Content, `55`) || !strings.Contains(res[0].Content, "untrusted_data") {
		t.Fatalf("tool result %+v", res)
	}
	// /codestats counts it.
	e.tg.PushText(2002, 2002, "/codestats", time.Now())
	waitReply(t, e.tg, 2002, 2, "1")
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
