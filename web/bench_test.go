package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// fixedBackend answers from fixed data, so the benchmarks measure the
// front end's own cost (routing, auth, encoding, templates); the store's
// share is measured in store/directory_test.go.
type fixedBackend struct {
	Backend
	memories []*kairos.Memory
	overview *Overview
}

func (f *fixedBackend) Memories(context.Context, string, kairos.Page) ([]*kairos.Memory, string, error) {
	return f.memories, "12345", nil
}
func (f *fixedBackend) Overview(context.Context) (*Overview, error) { return f.overview, nil }
func (f *fixedBackend) IsOperator(int64) bool                       { return true }
func (f *fixedBackend) Zone(context.Context, int64) *time.Location  { return time.UTC }
func (f *fixedBackend) Names(context.Context, []string) (map[string]kairos.UserName, error) {
	return map[string]kairos.UserName{}, nil
}

// memStore is an APIStore with one token and one session, in memory.
type memStore struct {
	kairos.APIStore
	tok  *kairos.APIToken
	sess *kairos.ConsoleSession
}

func (m *memStore) APITokenByHash(context.Context, string, time.Time) (*kairos.APIToken, error) {
	return m.tok, nil
}
func (m *memStore) RecordAccess(context.Context, *kairos.AccessEntry) error { return nil }
func (m *memStore) ConsoleSession(context.Context, string, time.Time) (*kairos.ConsoleSession, error) {
	return m.sess, nil
}

func benchServer(b *testing.B) http.Handler {
	b.Helper()
	be := &fixedBackend{overview: &Overview{TurnsPerMinute: make([]int, 60), ModelLatencyMS: make([]float64, 60), Users: 10000}}
	for i := range 60 {
		be.overview.TurnsPerMinute[i], be.overview.ModelLatencyMS[i] = i%7, float64(800+i*13)
	}
	for i := range 50 {
		be.memories = append(be.memories, &kairos.Memory{ID: kairos.NewID(), UserKey: "telegram:42", Store: "user_memory", Type: "fact",
			Content: fmt.Sprintf("note %d about the garden, the tomatoes and the rain gauge", i), CreatedAt: time.Now()})
	}
	st := &memStore{tok: &kairos.APIToken{Name: "bench", Scope: kairos.ScopeRead},
		sess: &kairos.ConsoleSession{UserID: 1, CSRF: "c", ExpiresAt: time.Now().Add(time.Hour)}}
	mux := http.NewServeMux()
	New(Config{Backend: be, Store: st, ConsoleURL: "http://x"}).Register(mux)
	return mux
}

// BenchmarkAPIMemoriesPage is the front end's cost of one page of 50
// memories: token check, encoding.
func BenchmarkAPIMemoriesPage(b *testing.B) {
	h := benchServer(b)
	for b.Loop() {
		r := httptest.NewRequest("GET", "/api/v1/memories?limit=50", nil)
		r.Header.Set("Authorization", "Bearer kat_x")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}

// BenchmarkConsoleOverview renders the overview page with its two charts.
func BenchmarkConsoleOverview(b *testing.B) {
	h := benchServer(b)
	for b.Loop() {
		r := httptest.NewRequest("GET", "/console/", nil)
		r.AddCookie(&http.Cookie{Name: cookieName, Value: "kcs_x"})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
