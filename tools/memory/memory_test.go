package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
	"github.com/kairos-agent/kairos/tools/memory"
)

// The turn's time: Monday 2026-03-09 10:00 in Berlin.
var (
	berlin = mustLoc("Europe/Berlin")
	turn   = time.Date(2026, 3, 9, 10, 0, 0, 0, berlin)
)

func mustLoc(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.FixedZone("CET", 3600)
	}
	return loc
}

const (
	alice = "telegram:1001"
	bob   = "telegram:2002"
)

type fixture struct {
	t     *testing.T
	tool  *memory.Tool
	store *store.MemoryStore
}

func newFixture(t *testing.T, cfg memory.Config) *fixture {
	t.Helper()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	return &fixture{t: t, tool: memory.New(s, cfg), store: s}
}

func inv(user, args string) *kairos.ToolInvocation {
	return &kairos.ToolInvocation{Name: "memory", UserKey: user, SessionID: "sess-1", ThreadKey: "agent:main:telegram:group:-100", Now: turn, Arguments: json.RawMessage(args)}
}

type result struct {
	Success  bool   `json:"success"`
	Merged   *bool  `json:"merged"`
	Message  string `json:"message"`
	Memories []struct {
		ID        string   `json:"id"`
		Store     string   `json:"store"`
		Type      string   `json:"type"`
		Content   string   `json:"content"`
		Tags      []string `json:"tags"`
		PeriodKey string   `json:"period_key"`
		ChatID    string   `json:"chat_id"`
		CreatedAt string   `json:"created_at"`
		Relevance *float64 `json:"relevance"`
	} `json:"memories"`
}

func (f *fixture) call(user, args string) result {
	f.t.Helper()
	res, err := f.tool.Call(context.Background(), inv(user, args))
	if err != nil {
		f.t.Fatalf("Call(%s): %v", args, err)
	}
	if res.Tainted {
		f.t.Errorf("memory result marked tainted")
	}
	var r result
	dec := json.NewDecoder(strings.NewReader(string(res.Content)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		f.t.Fatalf("result %s: %v", res.Content, err)
	}
	if !r.Success {
		f.t.Fatalf("success=false: %s", res.Content)
	}
	return r
}

func TestStoreRecallListForget(t *testing.T) {
	f := newFixture(t, memory.Config{})
	r := f.call(alice, `{"action":"store","content":"Alice's sister Maria lives in Lisbon.","category":"relationship","tags":["Family"," sister "]}`)
	if r.Merged == nil || *r.Merged || len(r.Memories) != 1 {
		t.Fatalf("store = %+v", r)
	}
	sister := r.Memories[0]
	if sister.Store != "user_memory" || sister.Type != "relationship" || sister.CreatedAt != "2026-03-09T10:00:00+01:00" ||
		!cmp.Equal(sister.Tags, []string{"family", "sister"}) || sister.Relevance != nil {
		t.Errorf("stored memory = %+v", sister)
	}
	f.call(alice, `{"action":"store","content":"Wants to learn Portuguese before visiting Lisbon.","category":"life-goal","pursuingPriority":70}`)
	f.call(alice, `{"action":"store","store":"summaries","summary_type":"weekly-summary","content":"Planned the Lisbon trip; booked flights."}`)

	r = f.call(alice, `{"action":"recall","query":"where does my sister live"}`)
	if len(r.Memories) == 0 || r.Memories[0].ID != sister.ID || r.Memories[0].Relevance == nil || *r.Memories[0].Relevance != 1 {
		t.Fatalf("recall = %+v", r.Memories)
	}
	r = f.call(alice, `{"action":"recall","query":"Lisbon","store_filter":"summaries"}`)
	if len(r.Memories) != 1 || r.Memories[0].Type != "weekly-summary" || r.Memories[0].PeriodKey != "2026-W11" {
		t.Fatalf("recall summaries = %+v", r.Memories)
	}
	r = f.call(alice, `{"action":"list","limit":2}`)
	if len(r.Memories) != 2 || r.Memories[0].Type != "weekly-summary" || r.Memories[0].Relevance != nil {
		t.Fatalf("list = %+v", r.Memories)
	}
	r = f.call(alice, `{"action":"recall","query":"quantum chromodynamics"}`)
	if r.Memories == nil || len(r.Memories) != 0 {
		t.Errorf("no-match recall should give an empty list, got %+v", r.Memories)
	}

	r = f.call(alice, `{"action":"forget","memory_id":"`+sister.ID+`"}`)
	if len(r.Memories) != 1 || r.Memories[0].ID != sister.ID {
		t.Errorf("forget = %+v", r)
	}
	_, err := f.tool.Call(context.Background(), inv(alice, `{"action":"forget","memory_id":"`+sister.ID+`"}`))
	if kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("second forget = %v, want ENOTFOUND", err)
	}
}

func TestGroupIsolation(t *testing.T) {
	f := newFixture(t, memory.Config{})
	a := f.call(alice, `{"action":"store","content":"My PIN hint is the cat's birthday.","category":"personal-context"}`).Memories[0]
	f.call(bob, `{"action":"store","content":"Bob supports the cat rescue charity.","category":"fact"}`)
	for _, args := range []string{`{"action":"recall","query":"cat birthday PIN"}`, `{"action":"list"}`} {
		for _, m := range f.call(bob, args).Memories {
			if m.ID == a.ID || strings.Contains(m.Content, "PIN") {
				t.Errorf("%s as Bob returned Alice's memory %+v", args, m)
			}
		}
	}
	// Bob cannot forget Alice's memory, nor learn what it says.
	act, err := f.tool.Action(context.Background(), inv(bob, `{"action":"forget","memory_id":"`+a.ID+`"}`))
	if err != nil || strings.Contains(act.Reason, "PIN") {
		t.Errorf("Action as Bob = %+v, %v (must not quote Alice's memory)", act, err)
	}
	if _, err := f.tool.Call(context.Background(), inv(bob, `{"action":"forget","memory_id":"`+a.ID+`"}`)); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("Bob forgetting Alice's memory = %v, want ENOTFOUND", err)
	}
	if got := f.call(alice, `{"action":"recall","query":"PIN"}`).Memories; len(got) != 1 || got[0].ID != a.ID {
		t.Errorf("Alice's memory after Bob's attempt: %+v", got)
	}
}

func TestMergeReported(t *testing.T) {
	f := newFixture(t, memory.Config{})
	first := f.call(alice, `{"action":"store","content":"Takes the 8:05 train to work.","tags":["commute"]}`)
	again := f.call(alice, `{"action":"store","content":"takes the 8:05 train to work","category":"work","tags":["train"]}`)
	if again.Merged == nil || !*again.Merged || again.Memories[0].ID != first.Memories[0].ID {
		t.Fatalf("second store = %+v, want merged into %s", again, first.Memories[0].ID)
	}
	if m := again.Memories[0]; m.Type != "work" || !cmp.Equal(m.Tags, []string{"commute", "train"}) {
		t.Errorf("merged memory = %+v", m)
	}
	// A conversation summary of the same session and day is updated.
	s1 := f.call(alice, `{"action":"store","store":"summaries","summary_type":"conversation-summary","content":"Talked about trains."}`)
	s2 := f.call(alice, `{"action":"store","summary_type":"conversation-summary","period_key":"2026-03-09","chat_id":"sess-1","content":"Talked about trains and buses."}`)
	if s1.Memories[0].ChatID != "sess-1" || s1.Memories[0].PeriodKey != "2026-03-09" || !*s2.Merged || s2.Memories[0].ID != s1.Memories[0].ID ||
		s2.Memories[0].Content != "Talked about trains and buses." {
		t.Errorf("summary merge: %+v then %+v", s1, s2)
	}
}

func TestArgumentValidation(t *testing.T) {
	f := newFixture(t, memory.Config{})
	tests := []struct {
		args, want string
	}{
		{`{}`, `"action" is required`},
		{`{"action":"remember"}`, `"remember" is not one of store, recall, list, forget`},
		{`{"action":"store"}`, `"content" is required`},
		{`{"action":"store","content":"x","category":"hobby"}`, `"hobby" is not one of fact, preference`},
		{`{"action":"store","content":"x","pursuingPriority":101}`, `out of range 0..100`},
		{`{"action":"store","content":"x","pursuingPriority":-1}`, `out of range 0..100`},
		{`{"action":"store","content":"x","pursuingPriority":50.5}`, `expected an integer`},
		{`{"action":"store","content":"x","store":"long"}`, `"long" is not one of user_memory, summaries`},
		{`{"action":"store","content":"x","period_key":"2026-W10","store":"user_memory"}`, `"period_key" is only for store "summaries"`},
		{`{"action":"store","content":"x","store":"summaries"}`, `"summary_type" is required`},
		{`{"action":"store","content":"x","summary_type":"hourly-summary"}`, `"hourly-summary" is not one of conversation-summary`},
		{`{"action":"store","content":"x","summary_type":"weekly-summary","period_key":"2026-03"}`, `not a valid YYYY-Www key for weekly-summary`},
		{`{"action":"store","content":"x","summary_type":"weekly-summary","period_key":"2025-W53"}`, `not a valid YYYY-Www key`},
		{`{"action":"store","content":"x","summary_type":"daily-summary","period_key":"2026-02-29"}`, `not a valid YYYY-MM-DD key`},
		{`{"action":"store","content":"x","summary_type":"quarterly-summary","period_key":"2026-Q5"}`, `not a valid YYYY-Qn key`},
		{`{"action":"store","content":"x","summary_type":"monthly-summary","period_key":"2026-1"}`, `not a valid YYYY-MM key`},
		{`{"action":"store","content":"x","summary_type":"yearly-summary","period_key":"26"}`, `not a valid YYYY key`},
		{`{"action":"store","content":"x","summary_type":"daily-summary","chat_id":"c"}`, `"chat_id" is only for summary_type "conversation-summary"`},
		{`{"action":"store","content":"x","summary_type":"daily-summary","category":"fact"}`, `"category" is only for store "user_memory"`},
		{`{"action":"store","content":"x","query":"y"}`, `"query" is not used by action "store"`},
		{`{"action":"store","content":"x","layer":"long"}`, `"layer" is not used by action "store"`},
		{`{"action":"store","content":"x","tags":["a","b","c","d","e","f","g","h","i","j","k"]}`, `at most 10 tags`},
		{`{"action":"store","content":"` + strings.Repeat("x", 2001) + `"}`, `at most 2000`},
		{`{"action":"recall"}`, `"query" is required for recall`},
		{`{"action":"recall","query":"x","limit":0}`, `out of range 1..50`},
		{`{"action":"recall","query":"x","limit":51}`, `out of range 1..50`},
		{`{"action":"recall","query":"x","categories":["fact","hobby"]}`, `"hobby" is not one of`},
		{`{"action":"recall","query":"x","summary_types":["daily"]}`, `"daily" is not one of`},
		{`{"action":"recall","query":"x","store_filter":"summaries","categories":["fact"]}`, `"categories" filters user_memory`},
		{`{"action":"recall","query":"x","store_filter":"user_memory","period_key_prefix":"2025"}`, `"period_key_prefix" filters summaries`},
		{`{"action":"recall","query":"x","period_key_prefix":"2025%"}`, `not the start of a period key`},
		{`{"action":"recall","query":"x","store":"summaries","store_filter":"user_memory"}`, `disagree`},
		{`{"action":"recall","query":"x","from":"last week"}`, `"from": "last week" is not an ISO-8601 timestamp`},
		{`{"action":"recall","query":"x","from":"2026-03-02","to":"2026-03-01"}`, `"from" is after "to"`},
		{`{"action":"recall","query":"x","content":"y"}`, `"content" is not used by action "recall"`},
		{`{"action":"list","query":"x"}`, `"query" is not used by action "list"`},
		{`{"action":"forget"}`, `"memory_id" is required`},
		{`{"action":"forget","memory_id":"x","limit":3}`, `"limit" is not used by action "forget"`},
		{`{"action":"recall","query":"x","unknown":1}`, `unknown argument "unknown"`},
	}
	for _, tc := range tests {
		t.Run(tc.args[:min(len(tc.args), 80)], func(t *testing.T) {
			for name, err := range map[string]error{
				"Action": func() error { _, err := f.tool.Action(context.Background(), inv(alice, tc.args)); return err }(),
				"Call":   func() error { _, err := f.tool.Call(context.Background(), inv(alice, tc.args)); return err }(),
			} {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.want) {
					t.Errorf("%s = %v, want EINVALID containing %q", name, err, tc.want)
				}
			}
		})
	}
	// Empty values are "not given": models often send every field.
	f.call(alice, `{"action":"store","content":"ok","query":"","tags":[],"limit":null,"period_key":"","memory_id":""}`)
	if _, err := f.tool.Call(context.Background(), inv("", `{"action":"list"}`)); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("call without a user = %v", err)
	}
}

func TestTimeFilters(t *testing.T) {
	f := newFixture(t, memory.Config{})
	store := func(at time.Time, args string) {
		i := inv(alice, args)
		i.Now = at
		if _, err := f.tool.Call(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	store(time.Date(2026, 2, 10, 12, 0, 0, 0, berlin), `{"action":"store","content":"February fact about bikes."}`)
	store(time.Date(2026, 3, 5, 12, 0, 0, 0, berlin), `{"action":"store","content":"March fact about bikes."}`)
	store(turn, `{"action":"store","summary_type":"monthly-summary","period_key":"2026-02","content":"February: bikes everywhere."}`)
	store(turn, `{"action":"store","summary_type":"weekly-summary","period_key":"2025-W50","content":"A December week of bikes."}`)
	tests := []struct {
		args string
		want []string
	}{
		{`{"action":"recall","query":"bikes","from":"2026-03-01","to":"2026-03-31"}`, []string{"March fact about bikes."}},
		{`{"action":"recall","query":"bikes","from":"2026-02-01T00:00:00+01:00","to":"2026-02-28"}`, []string{"February fact about bikes.", "February: bikes everywhere."}},
		{`{"action":"recall","query":"bikes","period_key_prefix":"2025-w50"}`, []string{"A December week of bikes."}},
		{`{"action":"list","summary_types":["monthly-summary","weekly-summary"],"period_key_prefix":"2026"}`, []string{"February: bikes everywhere."}},
		{`{"action":"list","categories":["fact"],"to":"2026-02-28T23:59:59"}`, []string{"February fact about bikes."}},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			var got []string
			for _, m := range f.call(alice, tc.args).Memories {
				got = append(got, m.Content)
			}
			if !cmp.Equal(sortStrings(got), sortStrings(tc.want)) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestActions(t *testing.T) {
	f := newFixture(t, memory.Config{})
	m := f.call(alice, `{"action":"store","content":"Alice's wife is called Anna."}`).Memories[0]
	tests := []struct {
		args string
		want kairos.ToolAction
	}{
		{`{"action":"store","content":"x"}`, kairos.ToolAction{Name: "memory.store", Capability: "memory.write"}},
		{`{"action":"recall","query":"x"}`, kairos.ToolAction{Name: "memory.recall", Capability: "memory.read"}},
		{`{"action":"list"}`, kairos.ToolAction{Name: "memory.list", Capability: "memory.read"}},
		{`{"action":"forget","memory_id":"` + m.ID + `"}`, kairos.ToolAction{Name: "memory.forget", Capability: "memory.write", Impactful: true,
			Reason: "permanently deletes the memory “Alice's wife is called Anna.”", Target: "memories", TargetLabel: "forgetting any of your memories",
			Summary: "Forget the memory ‘Alice's wife is called Anna.’ (saved " + memory.SavedWhen(mustTime(t, m.CreatedAt), turn, "") + ")?"}},
		{`{"action":"forget","memory_id":"no-such-id"}`, kairos.ToolAction{Name: "memory.forget", Capability: "memory.write", Impactful: true,
			Reason: "permanently deletes memory no-such-id", Target: "memories", TargetLabel: "forgetting any of your memories",
			Summary: "Forget the memory no-such-id (I could not read it)?"}},
	}
	for _, tc := range tests {
		got, err := f.tool.Action(context.Background(), inv(alice, tc.args))
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Action(%s) = %+v, want %+v", tc.args, got, tc.want)
		}
	}
	// Action must not perform the forget.
	if _, err := f.store.FindMemory(context.Background(), alice, m.ID); err != nil {
		t.Errorf("Action deleted the memory: %v", err)
	}
}

func TestNewSession(t *testing.T) {
	var got *kairos.ToolInvocation
	f := newFixture(t, memory.Config{OnNewSession: func(ctx context.Context, inv *kairos.ToolInvocation) (string, error) {
		got = inv
		return "Started a new session.", nil
	}})
	// Seed 003's own call, with its legacy layer and category.
	r := f.call(alice, `{"action":"store","layer":"session","content":"__NEW_SESSION__","category":"system"}`)
	if got == nil || got.UserKey != alice || r.Message != "Started a new session." || r.Memories != nil || r.Merged != nil {
		t.Fatalf("new session: hook inv %v, result %+v", got, r)
	}
	if list := f.call(alice, `{"action":"list"}`).Memories; len(list) != 0 {
		t.Errorf("the marker was stored as a memory: %+v", list)
	}

	failing := newFixture(t, memory.Config{OnNewSession: func(context.Context, *kairos.ToolInvocation) (string, error) {
		return "", kairos.Errorf(kairos.ECONFLICT, "a session is being summarised")
	}})
	if _, err := failing.tool.Call(context.Background(), inv(alice, `{"action":"store","content":"__NEW_SESSION__"}`)); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Errorf("hook error = %v", err)
	}
	none := newFixture(t, memory.Config{})
	if _, err := none.tool.Call(context.Background(), inv(alice, `{"action":"store","content":"__NEW_SESSION__"}`)); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("no hook = %v", err)
	}
}

// fakeEmbedder maps words to axes: a tiny, deterministic embedding model.
type fakeEmbedder struct {
	mu    sync.Mutex
	calls int
	fail  bool
}

var axes = map[string]int{"jogging": 0, "marathon": 0, "running": 0, "tea": 1, "coffee": 1, "cat": 2, "kitten": 2}

func (e *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.fail {
		return nil, errors.New("embedding endpoint down")
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, 4)
		v[3] = 0.1
		for _, w := range strings.Fields(strings.ToLower(text)) {
			if ax, ok := axes[strings.Trim(w, ".,!?")]; ok {
				v[ax]++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestEmbedder(t *testing.T) {
	emb := &fakeEmbedder{}
	f := newFixture(t, memory.Config{Embedder: emb})
	marathon := f.call(alice, `{"action":"store","content":"Training for a marathon in May.","category":"life-goal"}`).Memories[0]
	f.call(alice, `{"action":"store","content":"Prefers green tea over coffee.","category":"preference"}`)
	// No shared word: only the embedding connects jogging to the marathon.
	r := f.call(alice, `{"action":"recall","query":"jogging"}`)
	if len(r.Memories) != 1 || r.Memories[0].ID != marathon.ID {
		t.Fatalf("semantic recall = %+v", r.Memories)
	}
	if emb.calls != 3 {
		t.Errorf("embed calls = %d, want 3 (two memories, one query)", emb.calls)
	}
	// When the embedder fails, store and recall still work on full text.
	emb.fail = true
	f.call(alice, `{"action":"store","content":"Adopted a kitten named Miso.","category":"personal-context"}`)
	if r := f.call(alice, `{"action":"recall","query":"kitten"}`); len(r.Memories) != 1 {
		t.Errorf("recall with failing embedder = %+v", r.Memories)
	}
}

func TestDisabledAction(t *testing.T) {
	f := newFixture(t, memory.Config{Actions: []string{memory.ActionStore, memory.ActionRecall, memory.ActionList}})
	if strings.Contains(string(f.tool.Spec().Parameters), `"forget"`) {
		t.Errorf("disabled forget still in schema: %s", f.tool.Spec().Parameters)
	}
	if _, err := f.tool.Call(context.Background(), inv(alice, `{"action":"forget","memory_id":"x"}`)); kairos.ErrorCode(err) != kairos.EFORBIDDEN {
		t.Errorf("disabled forget = %v, want EFORBIDDEN", err)
	}
}

func TestSpec(t *testing.T) {
	spec := memory.New(nil, memory.Config{}).Spec()
	var schema struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	// Exactly CONTRACT.md's parameters.
	want := []string{"action", "store", "content", "tags", "category", "pursuingPriority", "summary_type", "period_key", "chat_id",
		"query", "store_filter", "categories", "summary_types", "from", "to", "period_key_prefix", "limit", "memory_id"}
	var got []string
	for name := range schema.Properties {
		got = append(got, name)
	}
	if !cmp.Equal(sortStrings(got), sortStrings(want)) {
		t.Errorf("properties = %v, want %v", sortStrings(got), sortStrings(want))
	}
	if spec.Name != "memory" || !cmp.Equal(schema.Required, []string{"action"}) ||
		!cmp.Equal(schema.Properties["category"].Enum, kairos.MemoryCategories) ||
		!cmp.Equal(schema.Properties["summary_type"].Enum, kairos.SummaryTypes) {
		t.Errorf("spec = %s", spec.Parameters)
	}
	// Budget: about 250 tokens per schema; JSON runs ≈ 3.5–4 characters
	// per token.
	if n := len(spec.Description) + len(spec.Parameters); n > 1300 {
		t.Errorf("memory spec is %d characters; keep it under 1300", n)
	}
	t.Logf("memory spec: %d characters", len(spec.Description)+len(spec.Parameters))
}

func ExampleTool_Call() {
	dir, err := os.MkdirTemp("", "kairos-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	tool := memory.New(store.NewMemoryStore(db), memory.Config{})
	call := func(args string) {
		res, err := tool.Call(context.Background(), &kairos.ToolInvocation{UserKey: "telegram:42", Now: time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC), Arguments: json.RawMessage(args)})
		if err != nil {
			fmt.Println("error:", kairos.ErrorMessage(err))
			return
		}
		var out map[string]any
		json.Unmarshal(res.Content, &out)
		for _, m := range out["memories"].([]any) {
			m := m.(map[string]any)
			fmt.Println(out["merged"], m["type"], m["content"], m["relevance"])
		}
	}
	call(`{"action":"store","content":"Allergic to penicillin.","category":"health"}`)
	call(`{"action":"store","content":"allergic to Penicillin","category":"health"}`)
	call(`{"action":"recall","query":"penicillin allergy"}`)
	call(`{"action":"store","content":"x","pursuingPriority":300}`)
	// Output:
	// false health Allergic to penicillin. <nil>
	// true health allergic to Penicillin <nil>
	// <nil> health allergic to Penicillin 1
	// error: argument "pursuingPriority": 300 is out of range 0..100
}

// FuzzArguments: whatever the model sends, the tool answers with a result
// or an error the model can read — never a panic or an internal error.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		`{"action":"store","content":"x","summary_type":"weekly-summary","period_key":"2026-W53"}`,
		`{"action":"recall","query":"\"a\" OR b*","from":"2026-01-01","to":"2026-01-02T00:00:00Z","period_key_prefix":"2026-Q"}`,
		`{"action":"list","categories":["fact"],"limit":50}`,
		`{"action":"forget","memory_id":"' OR 1=1"}`,
		`{"action":"store","content":"__NEW_SESSION__","layer":"session"}`,
		`{"action":"store","content":"\u0000","tags":["\u0000"],"chat_id":"\u0000"}`,
	} {
		f.Add(s)
	}
	s := store.NewMemoryStore(storetest.MustOpenSQLite(f))
	tool := memory.New(s, memory.Config{})
	f.Fuzz(func(t *testing.T, args string) {
		i := inv(alice, args)
		_, aerr := tool.Action(context.Background(), i)
		res, err := tool.Call(context.Background(), i)
		for _, e := range []error{aerr, err} {
			switch kairos.ErrorCode(e) {
			case "", kairos.EINVALID, kairos.ENOTFOUND:
			default:
				t.Fatalf("%s: %v", args, e)
			}
		}
		if err == nil && !json.Valid(res.Content) {
			t.Fatalf("%s: invalid JSON %s", args, res.Content)
		}
	})
}

// TestSavedWhen says when a memory was saved as a person would, in the
// user's zone: the day boundary is theirs, not UTC's.
func TestSavedWhen(t *testing.T) {
	now := time.Date(2026, 3, 12, 9, 0, 0, 0, time.UTC) // a Thursday
	for _, tc := range []struct {
		at   time.Time
		zone string
		want string
	}{
		{now.Add(-time.Hour), "", "today"},
		{now.Add(-20 * time.Hour), "", "yesterday"},
		{now.Add(-48 * time.Hour), "", "Tuesday"},
		{now.AddDate(0, 0, -20), "", "20 Feb"},
		{now.AddDate(-1, 0, 0), "", "12 Mar 2025"},
		// 23:30 on Wednesday in UTC is Thursday in Tokyo: today there.
		{time.Date(2026, 3, 11, 23, 30, 0, 0, time.UTC), "Asia/Tokyo", "today"},
		{time.Date(2026, 3, 11, 23, 30, 0, 0, time.UTC), "", "yesterday"},
		{now, "Not/AZone", "today"},
	} {
		if got := memory.SavedWhen(tc.at, now, tc.zone); got != tc.want {
			t.Errorf("SavedWhen(%v, %q) = %q, want %q", tc.at, tc.zone, got, tc.want)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
