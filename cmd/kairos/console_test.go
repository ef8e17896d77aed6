package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// apiToken makes a token through `kairos token create` and returns it.
func (e *env) apiToken(t *testing.T, scope, name string) string {
	t.Helper()
	out := &syncBuffer{}
	m := e.main()
	m.Stdout = out
	if code := m.Main(context.Background(), []string{"token", "create", "--scope", scope, "--name", name}); code != 0 {
		t.Fatalf("token create exited %d:\n%s", code, e.logs.String())
	}
	tok := strings.TrimSpace(out.String())
	if !strings.HasPrefix(tok, "kat_") || len(tok) < 40 {
		t.Fatalf("token create printed %q", tok)
	}
	return tok
}

// apiCall makes one API request and decodes a JSON answer.
func apiCall(t *testing.T, method, u, token, ctype string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s answered %d with non-JSON %q", method, u, resp.StatusCode, raw)
	}
	return resp.StatusCode, v
}

// TestAPIOpenAPIDocumentIsTrue calls every operation the document lists
// and checks the answer's status is one it documents and the body has
// the documented schema's required fields.
func TestAPIOpenAPIDocumentIsTrue(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(approvalModel)
	write := e.apiToken(t, "admin", "docs") // covers every scope
	addr := e.start()
	base := "http://" + addr
	e.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
	waitReply(t, e.tg, approvalChat, 1, "Done")

	code, doc := apiCall(t, "GET", base+"/api/v1/openapi.json", "", "", nil)
	if code != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: %d %v", code, doc["openapi"])
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	thread := "agent:main:telegram:dm:" + strconv.Itoa(approvalChat)
	policyText := []byte(fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\n", operatorID))
	calls := 0
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			op := op.(map[string]any)
			u := base + strings.ReplaceAll(path, "{id}", url.PathEscape(thread))
			var body []byte
			ctype := ""
			switch {
			case strings.HasPrefix(path, "/api/v1/memories/"):
				u = base + "/api/v1/memories/no-such-memory?user=telegram:2002"
			case strings.HasPrefix(path, "/api/v1/schedules/"):
				u = base + "/api/v1/schedules/999999/cancel"
			case strings.HasPrefix(path, "/api/v1/approvals/"):
				u, body, ctype = base+"/api/v1/approvals/nope/decision", []byte(`{"approve": false}`), "application/json"
			case path == "/api/v1/messages":
				body, ctype = []byte(`{"user_id": 2002, "text": "hello from a script", "deliver": false}`), "application/json"
			case strings.HasPrefix(path, "/api/v1/policy"):
				body, ctype = policyText, "application/yaml"
			}
			status, got := apiCall(t, strings.ToUpper(method), u, write, ctype, body)
			calls++
			resp, ok := op["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
			if !ok {
				t.Errorf("%s %s answered %d, which the document does not list: %v", method, path, status, got)
				continue
			}
			ref := resp["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"].(string)
			schema := schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			req, _ := schema["required"].([]any)
			for _, f := range req {
				if _, ok := got[f.(string)]; !ok {
					t.Errorf("%s %s (%d): body lacks required %q: %v", method, path, status, f, got)
				}
			}
		}
	}
	if calls < 18 {
		t.Fatalf("the document lists %d operations, want at least 18", calls)
	}
}

func TestAPIAuthScopesAndWriteRecord(t *testing.T) {
	e := newEnv(t)
	read := e.apiToken(t, "read", "dashboard")
	write := e.apiToken(t, "write", "homeassistant")
	admin := e.apiToken(t, "admin", "ops")
	addr := e.start()
	base := "http://" + addr + "/api/v1"

	if code, body := apiCall(t, "GET", base+"/users", "", "", nil); code != 401 || body["error"].(map[string]any)["code"] != "unauthorized" {
		t.Fatalf("no token: %d %v", code, body)
	}
	if code, _ := apiCall(t, "GET", base+"/users", "kat_wrong", "", nil); code != 401 {
		t.Fatalf("a wrong token: %d", code)
	}
	if code, _ := apiCall(t, "GET", base+"/users", read, "", nil); code != 200 {
		t.Fatalf("read token on a read route: %d", code)
	}
	bad := []byte("access:\n  operators: [1]\n  bogus: true\n")
	if code, _ := apiCall(t, "PUT", base+"/policy", read, "application/yaml", bad); code != 403 {
		t.Fatalf("read token on a write route: %d", code)
	}
	if code, _ := apiCall(t, "PUT", base+"/policy", write, "application/yaml", bad); code != 403 {
		t.Fatalf("write token on an admin route: %d", code)
	}
	code, body := apiCall(t, "PUT", base+"/policy", admin, "application/yaml", bad)
	if code != 422 || body["valid"] != false {
		t.Fatalf("a bad policy: %d %v", code, body)
	}
	if p := body["problems"].([]any)[0].(map[string]any); p["line"].(float64) != 3 || p["column"].(float64) != 3 {
		t.Fatalf("problem position = %v, want line 3 column 3", p)
	}
	if code, body := apiCall(t, "POST", base+"/messages", write, "application/json", []byte(`{"user_id": 555, "text": "hi"}`)); code != 403 {
		t.Fatalf("a turn for a stranger: %d %v", code, body)
	}
	db := (&approvalRig{vars: e.vars}).db(t)
	waitFor(t, "the writes recorded with the tokens' names", func() bool {
		return count(t, db, "api_writes", "actor = ?", "token:homeassistant") == 1 && count(t, db, "api_writes", "actor = ?", "token:ops") == 1
	})
	// Revoked, it stops working at once.
	list := &syncBuffer{}
	m := e.main()
	m.Stdout = list
	m.Main(context.Background(), []string{"token", "list"})
	var toks []struct{ ID, Name string }
	if err := json.Unmarshal([]byte(list.String()), &toks); err != nil || len(toks) != 3 {
		t.Fatalf("token list: %v %q", err, list.String())
	}
	if strings.Contains(list.String(), read) || strings.Contains(e.logs.String(), read) {
		t.Fatal("a token's secret was printed by list or logged")
	}
	i := slices.IndexFunc(toks, func(x struct{ ID, Name string }) bool { return x.Name == "dashboard" })
	if code := e.main().Main(context.Background(), []string{"token", "revoke", toks[i].ID}); code != 0 {
		t.Fatalf("revoke exited %d", code)
	}
	if code, _ := apiCall(t, "GET", base+"/users", read, "", nil); code != 401 {
		t.Fatalf("a revoked token: %d", code)
	}
}

func TestAPIMessageRunsATurnAndDelivers(t *testing.T) {
	e := newEnv(t)
	e.llm.Enqueue(testkit.TextReply("The lights are off now."))
	write := e.apiToken(t, "write", "script")
	addr := e.start()
	code, body := apiCall(t, "POST", "http://"+addr+"/api/v1/messages", write, "application/json",
		[]byte(`{"user_id": 2002, "text": "turn off the lights"}`))
	if code != 200 || body["answer"] != "The lights are off now." || body["delivered"] != true {
		t.Fatalf("messages: %d %v", code, body)
	}
	waitReply(t, e.tg, approvalChat, 1, "The lights are off now.")
	if got := e.llm.LastRequest().LastUserMessage(); got != "turn off the lights" {
		t.Fatalf("the model saw %q", got)
	}
	// The turn is counted against the user, as kairos usage reports it.
	read := e.apiToken(t, "read", "usage")
	var rows []any
	waitFor(t, "the turn in /api/v1/usage", func() bool {
		_, u := apiCall(t, "GET", "http://"+addr+"/api/v1/usage?user_id=2002", read, "", nil)
		rows, _ = u["rows"].([]any)
		return len(rows) == 1
	})
	if r := rows[0].(map[string]any); r["model"] != "test-model" || r["tokens"].(float64) <= 0 || r["user_id"].(float64) != 2002 {
		t.Fatalf("usage row = %v", r)
	}
}

var linkRe = regexp.MustCompile(`https?://\S+/console/login\?t=\S+`)

// consoleLink asks the bot for a sign-in link as the operator.
func consoleLink(t *testing.T, e *env, n int) string {
	t.Helper()
	e.tg.PushText(operatorID, operatorID, "/console", time.Now())
	msg := waitReply(t, e.tg, operatorID, n, "sign-in link")
	link := linkRe.FindString(msg)
	if link == "" {
		t.Fatalf("no link in %q", msg)
	}
	return link
}

// signIn follows a link and presses Sign in; it returns a client holding
// the session cookie.
func signIn(t *testing.T, link string) (*http.Client, *http.Response) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(link)
	resp, err = c.PostForm(u.Scheme+"://"+u.Host+"/console/login", url.Values{"t": {u.Query().Get("t")}})
	if err != nil {
		t.Fatal(err)
	}
	return c, resp
}

// mustSignIn signs in and fails the test, with the page, unless the
// console's overview answered.
func mustSignIn(t *testing.T, link string) *http.Client {
	t.Helper()
	c, resp := signIn(t, link)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/console/" {
		t.Fatalf("sign-in with %s ended at %s with %d:\n%s", link, resp.Request.URL, resp.StatusCode, b)
	}
	return c
}

// csrfOf is a console page's CSRF token.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func TestConsoleSignInCSRFAndApprove(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(approvalModel)
	addr := e.start()
	base := "http://" + addr

	// A non-operator gets nothing.
	e.tg.PushText(approvalChat, approvalChat, "/console", time.Now())
	if msg := waitReply(t, e.tg, approvalChat, 1, ""); strings.Contains(msg, "/console/login") {
		t.Fatalf("a non-operator got a link: %q", msg)
	}
	link := consoleLink(t, e, 1)
	if code, _ := get(t, http.DefaultClient, base+"/console/"); code != 401 {
		t.Fatalf("the console without a session: %d", code)
	}
	c, resp := signIn(t, link)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/console/" {
		t.Fatalf("sign-in ended at %s with %d", resp.Request.URL, resp.StatusCode)
	}
	ck := resp.Request.Response.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie = %+v", ck)
	}
	if _, again := signIn(t, link); again.StatusCode != 403 {
		t.Fatalf("a used link signed in again: %d", again.StatusCode)
	}

	_, _ = e.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now()), 0
	waitReply(t, e.tg, approvalChat, 2, "Done")
	e.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	waitReply(t, e.tg, approvalChat, 3, "Approval needed")
	code, page := get(t, c, base+"/console/approvals?status=pending")
	idm := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(page)
	if code != 200 || idm == nil || !strings.Contains(page, "memory.forget") {
		t.Fatalf("approvals page (%d) lacks the pending request:\n%s", code, page)
	}
	csrf := csrfOf(t, page)
	forged, _ := c.PostForm(base+"/console/approvals/decide", url.Values{"id": {idm[1]}, "approve": {"1"}})
	forged.Body.Close()
	if forged.StatusCode != 403 {
		t.Fatalf("a decision without the CSRF token: %d", forged.StatusCode)
	}
	ok, _ := c.PostForm(base+"/console/approvals/decide", url.Values{"id": {idm[1]}, "approve": {"1"}, "csrf": {csrf}})
	ok.Body.Close()
	if ok.StatusCode != 200 || ok.Request.URL.Path != "/console/approvals" {
		t.Fatalf("decide: %d at %s", ok.StatusCode, ok.Request.URL)
	}
	waitReply(t, e.tg, approvalChat, 4, "Forget outcome")

	// Sign out ends the session.
	out, _ := c.PostForm(base+"/console/logout", url.Values{"csrf": {csrf}})
	out.Body.Close()
	if code, _ := get(t, c, base+"/console/"); code != 401 {
		t.Fatalf("after sign-out: %d", code)
	}
}

func TestConsolePolicyEditorShowsLineAndColumn(t *testing.T) {
	e := newEnv(t)
	addr := e.start()
	base := "http://" + addr
	c := mustSignIn(t, consoleLink(t, e, 1))
	_, page := get(t, c, base+"/console/policy")
	csrf := csrfOf(t, page)
	bad := fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\nagent:\n  max_stepz: 3\n", operatorID)
	r, _ := c.PostForm(base+"/console/policy", url.Values{"text": {bad}, "csrf": {csrf}})
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 422 || !strings.Contains(string(b), "line 5, column 3") {
		t.Fatalf("a bad policy (%d):\n%s", r.StatusCode, b)
	}
	good := fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\nagent:\n  max_steps: 3\n", operatorID)
	r, _ = c.PostForm(base+"/console/policy", url.Values{"text": {good}, "csrf": {csrf}})
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(r.Request.URL.RawQuery, "saved=1") {
		t.Fatalf("a good policy: %d at %s", r.StatusCode, r.Request.URL)
	}
	waitFor(t, "the saved policy in force", func() bool { return strings.Contains(e.logs.String(), "policy reloaded") })
}

// The skills page shows each kept version with its diff, and a rollback
// from the console (or the API) switches the version the next call runs.
func TestConsoleSkillVersionsDiffAndRollback(t *testing.T) {
	e := skillEnv(t, "")
	v2 := "function run(input) {\n  return {doubled: input.n + input.n, v: 2};\n}"
	upd, _ := json.Marshal(map[string]any{"action": "update", "name": "double", "code": v2,
		"tests": []map[string]any{{"name": "two", "input": map[string]any{"n": 2}, "expect": map[string]any{"doubled": 4, "v": 2}}}})
	e.llm.SetHandler(skillModel(createCall("double", skillCode, `{"doubled":4}`), string(upd)))
	write := e.apiToken(t, "write", "ops")
	addr := e.startWithCells()
	base := "http://" + addr
	makeDouble(t, e)
	e.tg.PushText(2002, 2002, "update it", time.Now())
	approve(t, e, 2002, 3)
	waitReply(t, e.tg, 2002, 4, `"version":2`)

	code, detail := apiCall(t, "GET", base+"/api/v1/skills/1", write, "", nil)
	vs, _ := detail["versions"].([]any)
	if code != 200 || len(vs) != 2 || !strings.Contains(vs[0].(map[string]any)["diff"].(string), "+  return {doubled: input.n + input.n, v: 2};") {
		t.Fatalf("skill detail %d: %v", code, detail)
	}
	c := mustSignIn(t, consoleLink(t, e, 1))
	_, page := get(t, c, base+"/console/skill?id=1")
	if !strings.Contains(page, "Diff from the version before") || !strings.Contains(page, "Roll back to v1") {
		t.Fatalf("skill page:\n%s", page)
	}
	csrf := csrfOf(t, page)
	r, _ := c.PostForm(base+"/console/skill/action", url.Values{"csrf": {csrf}, "id": {"1"}, "action": {"rollback"}, "to": {"1"}})
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(r.Request.URL.RawQuery, "back+at+version+1") {
		t.Fatalf("rollback: %d at %s", r.StatusCode, r.Request.URL)
	}
	if out := runSkillCmd(t, e, "skill", "list"); !strings.Contains(out, `"version":1`) {
		t.Fatalf("after the console's rollback: %s", out)
	}
	if code, body := apiCall(t, "POST", base+"/api/v1/skills/1/action", write, "application/json", []byte(`{"action":"disable"}`)); code != 200 {
		t.Fatalf("disable through the API: %d %v", code, body)
	}
	if out := runSkillCmd(t, e, "skill", "list"); !strings.Contains(out, `"enabled":false`) {
		t.Fatalf("after the API's disable: %s", out)
	}
}
