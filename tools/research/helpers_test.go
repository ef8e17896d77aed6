package research_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/media"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/tools/research"
)

const user = "telegram:7"

// rig is an engine over a real store, a real offline folder, a fake web
// (every host served by one httptest server, requests counted by host)
// and the scripted roles.
type rig struct {
	t        *testing.T
	db       *store.DB
	traces   *store.ResearchStore
	memories *store.MemoryStore
	dir      string
	script   *testkit.ResearchScript
	model    *mock.Model
	pol      *kairos.Policy
	web      *fakeWeb
	search   *fakeSearch
	now      time.Time
	eng      *research.Engine
	secrets  []string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	db := storetest.MustOpenDB(t)
	r := &rig{t: t, db: db, traces: store.NewResearchStore(db), memories: store.NewMemoryStore(db), dir: t.TempDir(),
		script: &testkit.ResearchScript{}, now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	r.web = newFakeWeb(t)
	r.search = &fakeSearch{results: map[string][]research.SearchResult{}}
	r.pol = kairos.DefaultPolicy()
	r.pol.Research.Offline.Dir = r.dir
	r.pol.Research.Web.AllowList = []string{"facts.example", "*.wiki.example"}
	r.model = &mock.Model{ChatFn: func(_ context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		resp := mock.Answer(req, r.script.Reply(req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content))
		resp.Usage = kairos.Usage{PromptTokens: fit.Estimate(req.Messages[1].Content) + 100, CompletionTokens: fit.Estimate(resp.Message.Content)}
		return resp, nil
	}}
	r.build()
	return r
}

// build (re)makes the engine, as a restart would.
func (r *rig) build() {
	r.eng = research.New(research.Config{Store: r.traces, Index: r.traces, Memories: r.memories, Model: r.model,
		Models: func() []string { return []string{"test-model"} }, Search: r.search, HTTP: r.web.client(),
		Policy: func() *kairos.Policy { return r.pol }, PDFText: media.PDFText, Secrets: r.secrets,
		Now: func() time.Time { return r.now }})
}

func (r *rig) remember(content string, at time.Time) *kairos.Memory {
	r.t.Helper()
	m, _, err := r.memories.StoreMemory(context.Background(), &kairos.Memory{UserKey: user, Store: kairos.StoreUserMemory,
		Type: "fact", Content: content, CreatedAt: at})
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rig) file(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) ask(q string) *research.Result {
	r.t.Helper()
	res, err := r.eng.Research(context.Background(), research.Request{UserKey: user, Question: q})
	if err != nil {
		r.t.Fatalf("research %q: %v", q, err)
	}
	return res
}

// trace returns the stored trace and its state as a map.
func (r *rig) trace(id string) (*kairos.ResearchTrace, map[string]any) {
	r.t.Helper()
	tr, err := r.traces.Trace(context.Background(), user, id)
	if err != nil {
		r.t.Fatal(err)
	}
	var st map[string]any
	if err := jsonUnmarshal(tr.State, &st); err != nil {
		r.t.Fatal(err)
	}
	return tr, st
}

// fakeSearch is the web tier's search backend.
type fakeSearch struct {
	mu      sync.Mutex
	results map[string][]research.SearchResult // by a word the query must hold
	queries []string
}

func (f *fakeSearch) Search(_ context.Context, q string, max int) ([]research.SearchResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	var out []research.SearchResult
	for word, rs := range f.results {
		if strings.Contains(strings.ToLower(q), word) {
			out = append(out, rs...)
		}
	}
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}

func (f *fakeSearch) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queries)
}

// fakeWeb serves pages by host and path from one server; every request
// is counted by host.
type fakeWeb struct {
	srv   *httptest.Server
	mu    sync.Mutex
	pages map[string]string // "host/path" → HTML
	hits  map[string]int
}

func newFakeWeb(t *testing.T) *fakeWeb {
	w := &fakeWeb{pages: map[string]string{}, hits: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		w.mu.Lock()
		w.hits[req.Host]++
		page, ok := w.pages[req.Host+req.URL.Path]
		w.mu.Unlock()
		if !ok {
			http.NotFound(rw, req)
			return
		}
		if strings.HasPrefix(page, "REDIRECT ") {
			http.Redirect(rw, req, strings.TrimPrefix(page, "REDIRECT "), http.StatusFound)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Write([]byte(page))
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *fakeWeb) page(hostPath, html string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pages[hostPath] = html
}

func (w *fakeWeb) hitsOn(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[host]
}

// client dials every *.example host at the fake server, others as usual.
func (w *fakeWeb) client() *http.Client {
	addr := w.srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(a); strings.HasSuffix(host, ".example") {
			a = addr
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}
