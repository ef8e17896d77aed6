package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/internal/testkit/mcpserver"
	"github.com/kairos-agent/kairos/mcp"
)

// The test binary doubles as a stdio MCP server: the manager starts it
// again with KAIROS_MCP_TEST_STDIO set.
func TestMain(m *testing.M) {
	runHelpers()
	if os.Getenv("KAIROS_MCP_TEST_MUTE") != "" {
		io.Copy(io.Discard, os.Stdin) // reads everything, never answers
		os.Exit(0)
	}
	if os.Getenv("KAIROS_MCP_TEST_STDIO") != "" {
		s := mcpserver.New("stdio-test")
		s.NotesFile = os.Getenv("KAIROS_MCP_TEST_NOTES")
		if err := s.ServeStdio(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type counter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *counter) MCPCall(server, tool, outcome string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[server+"/"+tool+"/"+outcome]++
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[k]
}

func newManager(t *testing.T, secrets map[string]string) (*mcp.Manager, *syncBuf, *counter) {
	t.Helper()
	logs := &syncBuf{}
	obs := &counter{}
	m := mcp.New(mcp.Config{Secrets: secrets, Logger: slog.New(slog.NewTextHandler(logs, nil)), Observer: obs,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, ConnectTimeout: 10 * time.Second})
	t.Cleanup(func() { m.Close() })
	return m, logs, obs
}

func policyWith(servers map[string]kairos.MCPServer) *kairos.Policy {
	p := kairos.DefaultPolicy()
	p.MCP.Servers = servers
	return p
}

func stdioServer(t *testing.T, tools ...string) kairos.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return kairos.MCPServer{Command: exe, Tools: tools, Impact: map[string]string{"echo": "read", "inject": "read"},
		Env: map[string]string{"KAIROS_MCP_TEST_STDIO": "1", "KAIROS_MCP_TEST_NOTES": t.TempDir() + "/notes"}}
}

func httpServer(t testing.TB, token string) (*mcpserver.Server, string) {
	t.Helper()
	s := mcpserver.New("http-test")
	ts := httptest.NewServer(s.Handler(token))
	t.Cleanup(ts.Close)
	t.Cleanup(s.Release)
	return s, ts.URL
}

// waitState waits (until the test's deadline) for the named server to be
// in state.
func waitState(t *testing.T, m *mcp.Manager, p *kairos.Policy, name, state string, extra ...func(mcp.ServerStatus) bool) mcp.ServerStatus {
	t.Helper()
	var got mcp.ServerStatus
	err := m.Wait(testkit.Deadline(t), p, func(ss []mcp.ServerStatus) bool {
		for _, s := range ss {
			if s.Name == name {
				got = s
				if s.State != state {
					return false
				}
				for _, f := range extra {
					if !f(s) {
						return false
					}
				}
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("server %s never reached %s: last %+v", name, state, got)
	}
	return got
}

func names(ts []kairos.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

func find(t *testing.T, ts []kairos.Tool, name string) kairos.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("tool %s not offered (offered: %v)", name, names(ts))
	return nil
}

func call(t *testing.T, tl kairos.Tool, args string) (*kairos.ToolResult, error) {
	t.Helper()
	return tl.Call(context.Background(), &kairos.ToolInvocation{CallID: "c1", Name: tl.Spec().Name, Arguments: json.RawMessage(args)})
}

func TestHTTPServerToolsAndCalls(t *testing.T) {
	srv, url := httpServer(t, "tok-123456")
	m, logs, obs := newManager(t, map[string]string{"NOTES": "tok-123456"})
	p := policyWith(map[string]kairos.MCPServer{"notes": {URL: url, TokenSecret: "NOTES", Tools: []string{"echo", "add_note", "bad.name"},
		Impact: map[string]string{"echo": "read"}}})
	m.Apply(p)
	st := waitState(t, m, p, "notes", mcp.StateReady)
	if st.Transport != kairos.MCPHTTP {
		t.Errorf("transport %q", st.Transport)
	}
	tools := m.Tools(p)
	if want := []string{"notes__add_note", "notes__echo"}; !slices.Equal(names(tools), want) {
		t.Fatalf("tools %v, want %v (allow-list only, bad names skipped)", names(tools), want)
	}
	echo := find(t, tools, "notes__echo")
	spec := echo.Spec()
	if !strings.HasPrefix(spec.Description, "[MCP server notes] Echoes") {
		t.Errorf("description %q", spec.Description)
	}
	for _, dropped := range []string{"$schema", `"title"`} {
		if strings.Contains(string(spec.Parameters), dropped) {
			t.Errorf("schema keeps %s: %s", dropped, spec.Parameters)
		}
	}
	if !strings.Contains(string(spec.Parameters), `"required":["text"]`) {
		t.Errorf("schema lost required: %s", spec.Parameters)
	}
	ext, ok := echo.(kairos.ExternalTool)
	if !ok || ext.Server() != "notes" || ext.OfferedAction() != kairos.ActionMCPRead {
		t.Fatalf("echo is not an external read tool: %#v", echo)
	}

	act, err := echo.Action(context.Background(), &kairos.ToolInvocation{Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil || act.Name != kairos.ActionMCPRead || act.Impactful {
		t.Errorf("echo action %+v, %v", act, err)
	}
	add := find(t, tools, "notes__add_note")
	act, err = add.Action(context.Background(), &kairos.ToolInvocation{Arguments: json.RawMessage(`{"text":"x"}`)})
	if err != nil || act.Name != kairos.ActionMCPWrite || !act.Impactful || act.Reason == "" {
		t.Errorf("add_note (no impact listed) action %+v, %v; want an impactful mcp.write", act, err)
	}
	if _, err := add.Action(context.Background(), &kairos.ToolInvocation{Arguments: json.RawMessage(`[1]`)}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("array arguments: %v", err)
	}

	res, err := call(t, echo, `{"text":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Tainted || !strings.Contains(string(res.Content), `"text":"echo: hi"`) || !strings.Contains(string(res.Content), `"success":true`) {
		t.Errorf("echo result %s tainted=%v", res.Content, res.Tainted)
	}
	if _, err := call(t, add, `{"text":"buy milk"}`); err != nil {
		t.Fatal(err)
	}
	if got := srv.Notes(); !slices.Equal(got, []string{"buy milk"}) {
		t.Errorf("server notes %v", got)
	}
	if obs.get("notes/echo/ok") != 1 || obs.get("notes/add_note/ok") != 1 {
		t.Errorf("observer %v", obs.calls)
	}
	var skipped bool
	for _, ts := range m.Status(p)[0].Tools {
		if ts.Remote == "bad.name" && ts.Skipped != "" && !ts.Offered {
			skipped = true
		}
	}
	if !skipped {
		t.Errorf("status does not show bad.name as skipped: %+v", m.Status(p)[0].Tools)
	}
	if strings.Contains(logs.String(), "tok-123456") {
		t.Errorf("the bearer token reached the log:\n%s", logs.String())
	}
}

func TestHTTPBadTokenIsAbsent(t *testing.T) {
	_, url := httpServer(t, "right-token")
	m, logs, _ := newManager(t, map[string]string{"NOTES": "wrong-token"})
	p := policyWith(map[string]kairos.MCPServer{"notes": {URL: url, TokenSecret: "NOTES", Tools: []string{"*"}}})
	m.Apply(p)
	st := waitState(t, m, p, "notes", mcp.StateDown)
	if st.Error == "" || strings.Contains(st.Error, "wrong-token") {
		t.Errorf("status error %q", st.Error)
	}
	if ts := m.Tools(p); len(ts) != 0 {
		t.Errorf("a server that refused us offers %v", names(ts))
	}
	if strings.Contains(logs.String(), "wrong-token") {
		t.Errorf("the token reached the log")
	}
}

func TestMissingSecretIsAbsent(t *testing.T) {
	_, url := httpServer(t, "")
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"notes": {URL: url, TokenSecret: "NOPE", Tools: []string{"*"}}})
	m.Apply(p)
	st := waitState(t, m, p, "notes", mcp.StateDown)
	if !strings.Contains(st.Error, "KAIROS_SECRET_NOPE") {
		t.Errorf("error %q does not name the variable", st.Error)
	}
}

func TestUnreachableAndDisabledServersAreAbsent(t *testing.T) {
	ts := httptest.NewServer(nil)
	url := ts.URL
	ts.Close() // nothing listens there any more
	_, live := httpServer(t, "")
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{
		"gone": {URL: url, Tools: []string{"*"}},
		"off":  {URL: live, Tools: []string{"*"}, Disabled: true},
		"live": {URL: live, Tools: []string{"echo"}},
	})
	m.Apply(p)
	waitState(t, m, p, "gone", mcp.StateDown)
	waitState(t, m, p, "live", mcp.StateReady)
	if got := names(m.Tools(p)); !slices.Equal(got, []string{"live__echo"}) {
		t.Errorf("tools %v", got)
	}
	if st := m.Status(p); st[2].Name != "off" || st[2].State != mcp.StateDisabled {
		t.Errorf("status %+v", st)
	}
}

func TestMaxToolsCapsTheList(t *testing.T) {
	_, url := httpServer(t, "")
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"a": {URL: url, Tools: []string{"*"}}, "b": {URL: url, Tools: []string{"*"}}})
	p.MCP.MaxTools = 3
	m.Apply(p)
	waitState(t, m, p, "a", mcp.StateReady)
	waitState(t, m, p, "b", mcp.StateReady)
	if got := names(m.Tools(p)); !slices.Equal(got, []string{"a__add_note", "a__crash", "a__echo"}) {
		t.Errorf("capped tools %v", got)
	}
	p.MCP.MaxTools = 0
	if got := m.Tools(p); len(got) != 0 {
		t.Errorf("max_tools 0 offers %v", names(got))
	}
}

func TestHangingToolTimesOut(t *testing.T) {
	srv, url := httpServer(t, "")
	defer srv.Release()
	m, _, obs := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"slow": {URL: url, Tools: []string{"hang", "echo"}, CallTimeout: kairos.MustDuration("PT0.3S")}})
	m.Apply(p)
	waitState(t, m, p, "slow", mcp.StateReady)
	tools := m.Tools(p)
	_, err := call(t, find(t, tools, "slow__hang"), `{}`)
	if kairos.ErrorCode(err) != kairos.EUNAVAILABLE || !strings.Contains(kairos.ErrorMessage(err), "did not answer") {
		t.Fatalf("hang: %v", err)
	}
	select {
	case <-srv.Hanging():
	default:
		t.Error("the hang call never reached the server")
	}
	if obs.get("slow/hang/timeout") != 1 {
		t.Errorf("observer %v", obs.calls)
	}
	if _, err := call(t, find(t, tools, "slow__echo"), `{"text":"still there"}`); err != nil {
		t.Errorf("after a timeout the server is still usable: %v", err)
	}
}

func TestCanceledTurnCancelsTheCall(t *testing.T) {
	srv, url := httpServer(t, "")
	defer srv.Release()
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"slow": {URL: url, Tools: []string{"hang"}}})
	m.Apply(p)
	waitState(t, m, p, "slow", mcp.StateReady)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.Hanging()
		cancel()
	}()
	tl := find(t, m.Tools(p), "slow__hang")
	_, err := tl.Call(ctx, &kairos.ToolInvocation{Name: "slow__hang", Arguments: json.RawMessage(`{}`)})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("call returned %v before the turn was canceled", err)
	}
}

func TestStdioServerCrashIsRestarted(t *testing.T) {
	m, logs, obs := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"local": stdioServer(t, "*")})
	m.Apply(p)
	waitState(t, m, p, "local", mcp.StateReady)
	tools := m.Tools(p)
	res, err := call(t, find(t, tools, "local__echo"), `{"text":"over stdio"}`)
	if err != nil || !strings.Contains(string(res.Content), "echo: over stdio") {
		t.Fatalf("echo over stdio: %v %s", err, res.Content)
	}
	cr, err := call(t, find(t, tools, "local__crash"), `{}`)
	if cr != nil {
		t.Logf("crash result %s", cr.Content)
	}
	if kairos.ErrorCode(err) != kairos.EUNAVAILABLE || !strings.Contains(kairos.ErrorMessage(err), "stopped during the call") {
		t.Fatalf("crash: %v %v", err, func() string {
			r, _ := call(t, find(t, tools, "local__echo"), `{}`)
			if r == nil {
				return ""
			}
			return string(r.Content)
		}())
	}
	if obs.get("local/crash/crashed") != 1 {
		t.Errorf("observer %v", obs.calls)
	}
	st := waitState(t, m, p, "local", mcp.StateReady, func(s mcp.ServerStatus) bool { return s.Restarts >= 1 })
	if len(st.Tools) == 0 {
		t.Fatal("restarted server lists no tools")
	}
	res, err = call(t, find(t, m.Tools(p), "local__echo"), `{"text":"again"}`)
	if err != nil || !strings.Contains(string(res.Content), "echo: again") {
		t.Fatalf("echo after restart: %v", err)
	}
	if !strings.Contains(logs.String(), "crash tool called: exiting") || !strings.Contains(logs.String(), "test mcp server ready on stdio") {
		t.Errorf("the server's stderr is not in the log:\n%s", logs.String())
	}
}

func TestStdioServerGetsNoKairosEnvironment(t *testing.T) {
	t.Setenv("TELEGRAM_BOT_TOKEN", "123:secret-bot-token")
	m, _, _ := newManager(t, map[string]string{"NOTES_KEY": "from-secret"})
	spec := stdioServer(t, "add_note")
	spec.SecretEnv = map[string]string{"NOTES_KEY": "NOTES_KEY"}
	p := policyWith(map[string]kairos.MCPServer{"local": spec})
	m.Apply(p)
	waitState(t, m, p, "local", mcp.StateReady)
	if _, err := call(t, find(t, m.Tools(p), "local__add_note"), `{"text":"x"}`); err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(spec.Env["KAIROS_MCP_TEST_NOTES"])
	if err != nil || string(notes) != "x\n" {
		t.Fatalf("notes file %q %v", notes, err)
	}
}

func TestApplyConnectsAndDisconnects(t *testing.T) {
	_, url := httpServer(t, "")
	m, _, _ := newManager(t, nil)
	p1 := policyWith(map[string]kairos.MCPServer{"one": {URL: url, Tools: []string{"echo"}}})
	m.Apply(p1)
	waitState(t, m, p1, "one", mcp.StateReady)

	p2 := policyWith(map[string]kairos.MCPServer{"two": stdioServer(t, "echo")})
	m.Apply(p2)
	waitState(t, m, p2, "two", mcp.StateReady)
	if got := names(m.Tools(p2)); !slices.Equal(got, []string{"two__echo"}) {
		t.Errorf("after reload: %v", got)
	}
	// A tool handed out before the reload fails cleanly.
	if got := m.Tools(p1); len(got) != 0 {
		t.Errorf("removed server still offers %v", names(got))
	}

	// Changing only the allow-list keeps the connection.
	p3 := policyWith(map[string]kairos.MCPServer{"two": stdioServer(t, "echo", "add_note")})
	p3.MCP.Servers["two"] = func(s kairos.MCPServer) kairos.MCPServer {
		s.Env = p2.MCP.Servers["two"].Env
		return s
	}(p3.MCP.Servers["two"])
	m.Apply(p3)
	if got := names(m.Tools(p3)); !slices.Equal(got, []string{"two__add_note", "two__echo"}) {
		t.Errorf("allow-list change: %v", got)
	}
	if st := m.Status(p3); st[0].Restarts != 0 {
		t.Errorf("an allow-list change reconnected: %+v", st[0])
	}

	m.Apply(kairos.DefaultPolicy())
	if got := m.Status(p3); got[0].State != mcp.StateDisabled {
		t.Errorf("after removing every server: %+v", got)
	}
}

// TestSilentAndMissingStdioServers: a server that never answers the
// handshake and a command that does not exist are down, absent from the
// tool list, and retried; Close does not hang on them.
func TestSilentAndMissingStdioServers(t *testing.T) {
	logs := &syncBuf{}
	m := mcp.New(mcp.Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, ConnectTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { m.Close() })
	mute := stdioServer(t, "*")
	mute.Env = map[string]string{"KAIROS_MCP_TEST_MUTE": "1"}
	p := policyWith(map[string]kairos.MCPServer{
		"mute":    mute,
		"missing": {Command: "/nonexistent/kairos-mcp-server", Tools: []string{"*"}},
	})
	m.Apply(p)
	st := waitState(t, m, p, "mute", mcp.StateDown, func(s mcp.ServerStatus) bool { return s.Restarts >= 1 })
	if !strings.Contains(st.Error, "deadline") && !strings.Contains(st.Error, "context") {
		t.Errorf("mute server error %q", st.Error)
	}
	st = waitState(t, m, p, "missing", mcp.StateDown)
	if !strings.Contains(st.Error, "no such file") {
		t.Errorf("missing command error %q", st.Error)
	}
	if got := m.Tools(p); len(got) != 0 {
		t.Errorf("tools %v", names(got))
	}
	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	select {
	case <-done:
	case <-testkit.Deadline(t).Done():
		t.Fatal("Close hangs on a silent server")
	}
}

// TestToolListChanges: a server that adds a tool tells the client, which
// lists again; the new tool is offered only when the allow-list lets it.
func TestToolListChanges(t *testing.T) {
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"all": stdioServer(t, "*"), "some": stdioServer(t, "grow")})
	m.Apply(p)
	waitState(t, m, p, "all", mcp.StateReady)
	waitState(t, m, p, "some", mcp.StateReady)
	for _, name := range []string{"all__grow", "some__grow"} {
		if _, err := call(t, find(t, m.Tools(p), name), `{}`); err != nil {
			t.Fatal(err)
		}
	}
	hasExtra := func(s mcp.ServerStatus) bool {
		return slices.ContainsFunc(s.Tools, func(ts mcp.ToolStatus) bool { return ts.Remote == "extra" })
	}
	waitState(t, m, p, "all", mcp.StateReady, hasExtra)
	waitState(t, m, p, "some", mcp.StateReady, hasExtra)
	got := names(m.Tools(p))
	if !slices.Contains(got, "all__extra") || slices.Contains(got, "some__extra") {
		t.Errorf("after the change: %v (want all__extra, not some__extra)", got)
	}
}

// TestHTTPServerGoneIsNoticed: an HTTP server that goes away after the
// connection is noticed by the ping and leaves the tool list.
func TestHTTPServerGoneIsNoticed(t *testing.T) {
	srv := mcpserver.New("http-test")
	ts := httptest.NewServer(srv.Handler(""))
	defer ts.Close()
	m := mcp.New(mcp.Config{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, PingInterval: 50 * time.Millisecond,
		ConnectTimeout: time.Second})
	t.Cleanup(func() { m.Close() })
	p := policyWith(map[string]kairos.MCPServer{"web": {URL: ts.URL, Tools: []string{"echo"}}})
	m.Apply(p)
	waitState(t, m, p, "web", mcp.StateReady)
	ts.CloseClientConnections()
	ts.Config.SetKeepAlivesEnabled(false)
	ts.Listener.Close()
	waitState(t, m, p, "web", mcp.StateDown)
	if got := m.Tools(p); len(got) != 0 {
		t.Errorf("a gone server offers %v", names(got))
	}
}
