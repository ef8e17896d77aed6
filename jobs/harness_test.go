package jobs_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/mock"
	"github.com/kairos-agent/kairos/jobs"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// answerText makes a mock.Model answer with fn's text; a nil fn numbers
// its answers ("summary #n of m chars").
func answerText(m *mock.Model, fn func(req kairos.ChatRequest) (string, error)) {
	m.SetChat(func(ctx context.Context, req kairos.ChatRequest) (*kairos.ChatResponse, error) {
		if fn == nil {
			return mock.Answer(req, fmt.Sprintf("summary #%d of %d chars", m.Calls(), len(req.Messages[len(req.Messages)-1].Content))), nil
		}
		text, err := fn(req)
		if err != nil {
			return nil, err
		}
		return mock.Answer(req, text), nil
	})
}

// requestsWith returns the model's requests whose system prompt contains s.
func requestsWith(m *mock.Model, s string) []kairos.ChatRequest {
	var out []kairos.ChatRequest
	for _, r := range m.Requests() {
		if strings.Contains(r.Messages[0].Content, s) {
			out = append(out, r)
		}
	}
	return out
}

// env is a scheduler over a real SQLite database.
type env struct {
	t        testing.TB
	db       *store.DB
	sessions *store.SessionStore
	memories *store.MemoryStore
	journal  *store.JobStore
	model    *mock.Model
	pol      *kairos.Policy
	polMu    sync.Mutex
	tz       map[string]*time.Location // thread key → Session TZ
	cfg      jobs.Config
	sched    *jobs.Scheduler
}

func newEnv(t testing.TB, mutate ...func(*jobs.Config)) *env {
	t.Helper()
	db := storetest.MustOpenDB(t)
	e := &env{t: t, db: db, sessions: store.NewSessionStore(db), memories: store.NewMemoryStore(db),
		journal: store.NewJobStore(db), model: &mock.Model{}, pol: kairos.DefaultPolicy(), tz: map[string]*time.Location{}}
	answerText(e.model, nil)
	e.cfg = jobs.Config{
		Sessions: e.sessions, Memories: e.memories, Model: e.model, Journal: e.journal,
		Models: func() []string { return []string{"m1"} },
		Policy: func() *kairos.Policy {
			e.polMu.Lock()
			defer e.polMu.Unlock()
			p := *e.pol
			return &p
		},
		Timezone: func(ctx context.Context, threadKey, userKey string) *time.Location { return e.tz[threadKey] },
		Now:      func() time.Time { t.Fatal("the scheduler read the wall clock in a RunDue test"); return time.Time{} },
	}
	for _, f := range mutate {
		f(&e.cfg)
	}
	e.sched = jobs.New(e.cfg)
	return e
}

func (e *env) setSessions(f func(p *kairos.SessionsPolicy)) {
	e.polMu.Lock()
	defer e.polMu.Unlock()
	p := *e.pol
	f(&p.Sessions)
	e.pol = &p
}

// user is a DM user with a Session TZ.
type user struct {
	id     int64
	thread string
	key    string
	loc    *time.Location
}

func (e *env) user(id int64, zone string) user {
	loc := mustLoc(e.t, zone)
	u := user{id: id, thread: kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, id, id, 0), key: kairos.UserKey(kairos.ChannelTelegram, id), loc: loc}
	e.tz[u.thread] = loc
	return u
}

// say stores one user message and an answer in the thread's open session
// (the session opens at `at` when there is none) and returns the session.
func (e *env) say(u user, at time.Time, text string) *kairos.Session {
	e.t.Helper()
	ctx := context.Background()
	sess, err := e.sessions.OpenSession(ctx, u.thread, u.key, at)
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.sessions.AppendMessages(ctx,
		&kairos.Message{SessionID: sess.ID, ThreadKey: u.thread, UserKey: u.key, Role: kairos.RoleUser, Content: text, CreatedAt: at},
		&kairos.Message{SessionID: sess.ID, ThreadKey: u.thread, Role: kairos.RoleAssistant, Content: "noted: " + text, CreatedAt: at})
	if err != nil {
		e.t.Fatal(err)
	}
	return sess
}

func (e *env) open(u user) *kairos.Session {
	e.t.Helper()
	all, err := e.sessions.ListOpenSessions(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range all {
		if s.ThreadKey == u.thread {
			return s
		}
	}
	e.t.Fatalf("no open session for %s", u.thread)
	return nil
}

func (e *env) find(id string) *kairos.Session {
	e.t.Helper()
	s, err := e.sessions.FindSession(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// summaries returns the user's summaries of a type, keyed by period key
// (chat id appended for conversation summaries), failing on duplicates.
func (e *env) summaries(u user, typ string) map[string]*kairos.Memory {
	e.t.Helper()
	got, err := e.memories.RecallMemories(context.Background(), kairos.MemoryFilter{UserKey: u.key, Store: kairos.StoreSummaries,
		SummaryTypes: []string{typ}, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*kairos.Memory{}
	for _, m := range got {
		k := m.PeriodKey
		if typ == kairos.SummaryConversation {
			k += "/" + m.ChatID
		}
		if out[k] != nil {
			e.t.Fatalf("duplicate %s %s", typ, k)
		}
		out[k] = m
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// periodKeys returns the period keys of a type's summaries, sorted.
func (e *env) periodKeys(u user, typ string) string {
	var ks []string
	for _, m := range e.summaries(u, typ) {
		ks = append(ks, m.PeriodKey)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func (e *env) run(job string, now time.Time) *kairos.JobRun {
	e.t.Helper()
	r, err := e.sched.RunJob(context.Background(), job, now)
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Outcome != kairos.JobOK {
		e.t.Fatalf("%s at %s: %s: %s", job, now, r.Outcome, r.Detail)
	}
	return r
}
