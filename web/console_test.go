package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// pageBackend is the console's backend with a policy file that may be
// absent and a save that may be refused.
type pageBackend struct {
	fixedBackend
	view   PolicyView
	refuse error
}

func (b *pageBackend) PolicyView() (*PolicyView, error) { v := b.view; return &v, nil }
func (b *pageBackend) ReplacePolicy(context.Context, []byte) ([]PolicyProblem, error) {
	return nil, b.refuse
}

// logStore records the access log and the writes.
type logStore struct {
	memStore
	mu      sync.Mutex
	entries []*kairos.AccessEntry
}

func (s *logStore) RecordAccess(_ context.Context, e *kairos.AccessEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, e)
	return nil
}
func (s *logStore) RecordAPIWrite(context.Context, *kairos.APIWrite) error { return nil }

func consoleServer(t *testing.T, be Backend) (*httptest.Server, *logStore) {
	t.Helper()
	st := &logStore{memStore: memStore{tok: &kairos.APIToken{ID: "t1", Name: "ha", Scope: kairos.ScopeRead},
		sess: &kairos.ConsoleSession{UserID: 1001, CSRF: "c", ExpiresAt: time.Now().Add(time.Hour)}}}
	mux := http.NewServeMux()
	New(Config{Backend: be, Store: st, ConsoleURL: "http://x"}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, st
}

func consoleGet(t *testing.T, srv *httptest.Server, method, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
	req.AddCookie(&http.Cookie{Name: cookieName, Value: "kcs_x"})
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Without a policy file the editor says the built-in defaults apply and
// shows them; a refused save says why and keeps the text.
func TestPolicyPageDefaultsAndRefusal(t *testing.T) {
	be := &pageBackend{view: PolicyView{Path: "/etc/kairos/policy.yaml", Effective: "clock:\n  enabled: true\n"}}
	srv, _ := consoleServer(t, be)
	code, page := consoleGet(t, srv, "GET", "/console/policy", nil)
	if code != 200 || !strings.Contains(page, "the built-in defaults apply") || !strings.Contains(page, "/etc/kairos/policy.yaml") ||
		!strings.Contains(page, `<pre id="effective" class="effective">clock:`) {
		t.Fatalf("policy page without a file (%d):\n%s", code, page)
	}
	be.view.Exists, be.view.Text = true, "access:\n  operators: [1001]\n"
	if _, page = consoleGet(t, srv, "GET", "/console/policy", nil); strings.Contains(page, "built-in defaults apply") ||
		!strings.Contains(page, "operators: [1001]") {
		t.Fatalf("policy page with a file:\n%s", page)
	}
	be.refuse = kairos.Errorf(kairos.EFORBIDDEN, "features is edited in the file on the host, not from the web.")
	wide := "features:\n  network: true\n"
	code, page = consoleGet(t, srv, "POST", "/console/policy", url.Values{"csrf": {"c"}, "text": {wide}})
	if code != 403 || !strings.Contains(page, "Not saved: features is edited in the file on the host") || !strings.Contains(page, "network: true") {
		t.Fatalf("a refused save (%d):\n%s", code, page)
	}
}

// Every API and console request is in the access log with who made it
// and its path without the query; the style sheet is not.
func TestAccessLogRecordsRequests(t *testing.T) {
	srv, st := consoleServer(t, &pageBackend{})
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/memories?user=telegram:1&cursor=secret", nil)
	req.Header.Set("Authorization", "Bearer kat_x")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if resp, err := http.Get(srv.URL + "/api/v1/users"); err == nil {
		resp.Body.Close()
	}
	if resp, err := http.Get(srv.URL + "/console/login?t=kcl_secret"); err == nil {
		resp.Body.Close()
	}
	consoleGet(t, srv, "GET", "/console/policy", nil)
	if resp, err := http.Get(srv.URL + "/console/static/style.css"); err == nil {
		resp.Body.Close()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var got []string
	for _, e := range st.entries {
		got = append(got, strings.Join([]string{e.Door, e.Actor, e.Via, e.Method, e.Path, http.StatusText(e.Status)}, "|"))
	}
	want := []string{
		"api|token:ha|token t1|GET|/api/v1/memories|OK",
		"api|||GET|/api/v1/users|Unauthorized",
		"console|||GET|/console/login|OK",
		"console|console:1001|session " + kairos.HashSecret("kcs_x")[:8] + "|GET|/console/policy|OK",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("access log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
