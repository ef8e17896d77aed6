package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestSessionLifecycle(t *testing.T) {
	ctx := context.Background()
	s := store.NewSessionStore(storetest.MustOpenDB(t))
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const thread = "agent:main:telegram:dm:1"

	a, err := s.OpenSession(ctx, thread, "telegram:1", t0)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.OpenSession(ctx, thread, "telegram:1", t0.Add(time.Hour))
	if err != nil || again.ID != a.ID {
		t.Fatalf("second OpenSession = %v, %v; want the same session %s", again, err, a.ID)
	}
	msgs := []*kairos.Message{
		{SessionID: a.ID, ThreadKey: thread, Role: kairos.RoleUser, Content: "hi", CreatedAt: t0},
		{SessionID: a.ID, ThreadKey: thread, Role: kairos.RoleAssistant, ToolCalls: []kairos.ToolCall{{ID: "c1", Name: "search", Arguments: `{"query":"x"}`}}, CreatedAt: t0},
		{SessionID: a.ID, ThreadKey: thread, Role: kairos.RoleTool, ToolCallID: "c1", Name: "search", Content: `{"results":[]}`, Tainted: true, CreatedAt: t0},
	}
	if err := s.AppendMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	got, err := s.Messages(ctx, a.ID, 0, 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("Messages = %d, %v", len(got), err)
	}
	if got[1].ToolCalls[0].Name != "search" || !got[2].Tainted || !got[0].CreatedAt.Equal(t0) {
		t.Fatalf("round trip lost data: %+v %+v %+v", got[0], got[1], got[2])
	}
	after, _ := s.Messages(ctx, a.ID, got[0].ID, 1)
	if len(after) != 1 || after[0].ID != got[1].ID {
		t.Fatalf("Messages(after, limit) = %+v", after)
	}

	b, err := s.EndSession(ctx, a.ID, "we said hi", t0.Add(2*time.Hour), "next")
	if err != nil {
		t.Fatal(err)
	}
	if b.PrevSessionID != a.ID || b.Name != "next" {
		t.Fatalf("next session = %+v", b)
	}
	if _, err := s.EndSession(ctx, a.ID, "again", t0.Add(3*time.Hour), ""); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("ending twice: %v, want ECONFLICT", err)
	}
	last, err := s.LastEndedSession(ctx, thread)
	if err != nil || last.ID != a.ID || last.Summary != "we said hi" {
		t.Fatalf("LastEndedSession = %+v, %v", last, err)
	}
	open, _ := s.OpenSession(ctx, thread, "telegram:1", t0.Add(4*time.Hour))
	if open.ID != b.ID {
		t.Fatalf("open session = %s, want %s", open.ID, b.ID)
	}
	ended, _ := s.ListEndedSessions(ctx, t0, t0.Add(3*time.Hour))
	if len(ended) != 1 {
		t.Fatalf("ListEndedSessions = %d", len(ended))
	}
	if _, err := s.FindSession(ctx, "nope"); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("FindSession(nope) = %v", err)
	}
}

// Many goroutines opening the same thread's session get one session.
func TestOpenSessionRace(t *testing.T) {
	ctx := context.Background()
	s := store.NewSessionStore(storetest.MustOpenDB(t))
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess, err := s.OpenSession(ctx, "agent:main:telegram:group:9", "telegram:1", time.Now())
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = sess.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("racing OpenSession made several sessions: %v", ids)
		}
	}
}

func TestUsageAndToolCalls(t *testing.T) {
	ctx := context.Background()
	s := store.NewSessionStore(storetest.MustOpenDB(t))
	for i := 0; i < 3; i++ {
		if err := s.RecordUsage(ctx, &kairos.UsageRecord{SessionID: "s1", UserKey: "telegram:1", Model: "m", PromptTokens: 10, CompletionTokens: 2}); err != nil {
			t.Fatal(err)
		}
	}
	p, c, err := s.UsageTotals(ctx, "telegram:1", "")
	if err != nil || p != 30 || c != 6 {
		t.Fatalf("UsageTotals = %d %d %v", p, c, err)
	}
	rec := &kairos.ToolCallRecord{ID: "c1", SessionID: "s1", Tool: "memory", Action: "memory.forget", Outcome: "pending"}
	if err := s.RecordToolCall(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Outcome, rec.Approval = "ok", "approved"
	if err := s.RecordToolCall(ctx, rec); err != nil {
		t.Fatal(err)
	}
	calls, err := s.ToolCalls(ctx, "s1")
	if err != nil || len(calls) != 1 || calls[0].Approval != "approved" {
		t.Fatalf("ToolCalls = %+v, %v", calls, err)
	}
}

// Calls journaled in the same millisecond come back in the order they were
// written, whatever their ids (random UUIDs in production).
func TestToolCallsKeepInsertionOrderWithinAMillisecond(t *testing.T) {
	ctx := context.Background()
	s := store.NewSessionStore(storetest.MustOpenDB(t))
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ids := []string{"e9", "a1", "f3", "0b", "c7", "b2"}
	for i, id := range ids {
		rec := &kairos.ToolCallRecord{ID: id, SessionID: "s1", Tool: "t" + string(rune('a'+i)), CreatedAt: at}
		if err := s.RecordToolCall(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := s.ToolCalls(ctx, "s1")
	if err != nil || len(calls) != len(ids) {
		t.Fatalf("ToolCalls = %d, %v; want %d", len(calls), err, len(ids))
	}
	for i, c := range calls {
		if c.ID != ids[i] {
			got := make([]string, len(calls))
			for j, c := range calls {
				got[j] = c.ID
			}
			t.Fatalf("ToolCalls order = %v; want %v (insertion order)", got, ids)
		}
	}
}
