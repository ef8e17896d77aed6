package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// webPolicyStart is the policy in force when the web edits begin: a
// spending cap the narrowing edit lowers.
func webPolicyStart() string {
	return fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    daily_usd: 5\n", operatorID)
}

// mcpCommandPolicy adds to text an MCP stdio server whose command writes
// the secret it is handed to marker: proof that it ran, and with what.
func mcpCommandPolicy(text, marker string) string {
	return text + fmt.Sprintf("mcp:\n  servers:\n    home:\n      command: /bin/sh\n      args: [\"-c\", \"echo \\\"$TOKEN\\\" > %s\"]\n      secret_env: {TOKEN: HOME}\n", marker)
}

// TestWebPolicyEditCannotRunAnythingOnTheHost: a write token may not
// replace the policy at all; an admin token (and the console's editor)
// may not add an MCP stdio command: 403 naming the key, the file left
// byte for byte, no process started. An admin's narrowing edit is
// applied.
func TestWebPolicyEditCannotRunAnythingOnTheHost(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_SECRET_HOME"] = "home-secret-77"
	path := e.vars["KAIROS_POLICY"]
	start := webPolicyStart()
	if err := os.WriteFile(path, []byte(start), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	evil := []byte(mcpCommandPolicy(start, marker))
	write := e.apiToken(t, "write", "homeassistant")
	addr := e.start()
	base := "http://" + addr

	code, body := apiCall(t, "PUT", base+"/api/v1/policy", write, "application/yaml", evil)
	if code != 403 {
		waitFor(t, "the command to run", func() bool { _, err := os.Stat(marker); return err == nil })
		ran, _ := os.ReadFile(marker)
		t.Fatalf("a write token's PUT with an MCP command: %d %v; the command ran and was handed %q", code, body, strings.TrimSpace(string(ran)))
	}
	admin := e.apiToken(t, "admin", "ops")
	code, body = apiCall(t, "PUT", base+"/api/v1/policy", admin, "application/yaml", evil)
	msg := fmt.Sprint(body["error"])
	if code != 403 || !strings.Contains(msg, "mcp.servers.home.command") || !strings.Contains(msg, "edit the policy file on the host") {
		t.Fatalf("an admin's PUT with an MCP command: %d %v", code, body)
	}
	mustBeFile(t, path, start)

	// The console's editor goes through the same rule.
	c := mustSignIn(t, consoleLink(t, e, 1))
	_, page := get(t, c, base+"/console/policy")
	r, err := c.PostForm(base+"/console/policy", url.Values{"text": {string(evil)}, "csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 403 || !strings.Contains(string(b), "mcp.servers.home.command") || !strings.Contains(string(b), "edit the policy file on the host") {
		t.Fatalf("the console's save with an MCP command (%d):\n%s", r.StatusCode, b)
	}
	mustBeFile(t, path, start)

	// A narrowing edit is applied; once it is in force, the refused
	// edits (older) would have been too, and nothing ran.
	narrowed := strings.Replace(start, "daily_usd: 5", "daily_usd: 2", 1)
	if code, body := apiCall(t, "PUT", base+"/api/v1/policy", admin, "application/yaml", []byte(narrowed)); code != 200 {
		t.Fatalf("an admin's narrowing edit: %d %v", code, body)
	}
	waitFor(t, "the narrowed cap in force", func() bool {
		_, got := apiCall(t, "GET", base+"/api/v1/policy", admin, "", nil)
		spend, _ := got["policy"].(map[string]any)["budgets"].(map[string]any)["spend"].(map[string]any)
		return spend["daily_usd"] == 2.0
	})
	mustBeFile(t, path, narrowed)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the refused MCP command ran")
	}
	if strings.Contains(e.logs.String(), "home-secret-77") {
		t.Fatal("the secret reached the logs")
	}
}

func mustBeFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("the policy file is now:\n%s\nwant, byte for byte:\n%s", got, want)
	}
}

// `token create` makes each scope of the contract, admin included, and
// refuses any other with a usage error naming --scope.
func TestTokenCreateScopes(t *testing.T) {
	e := newEnv(t)
	for _, scope := range []string{"read", "write", "admin"} {
		e.apiToken(t, scope, "t-"+scope)
	}
	if code := e.main().Main(context.Background(), []string{"token", "create", "--scope", "root"}); code != 2 || !strings.Contains(e.logs.String(), "--scope must be read, write or admin") {
		t.Fatalf("--scope root: exit %d:\n%s", code, e.logs.String())
	}
	list := &syncBuffer{}
	m := e.main()
	m.Stdout = list
	m.Main(context.Background(), []string{"token", "list"})
	var toks []struct{ Name, Scope string }
	if err := json.Unmarshal([]byte(list.String()), &toks); err != nil || len(toks) != 3 ||
		!slices.Contains(toks, struct{ Name, Scope string }{"t-admin", "admin"}) {
		t.Fatalf("token list: %v %s", err, list.String())
	}
}
