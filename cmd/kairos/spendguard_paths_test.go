package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/usage"
)

// Every part that can call the model gets it through the spending guard.
// The core is built as Main builds it (embeddings on), then every value
// reachable from it is walked: a raw model client (the chat client, which
// also embeds, or its audio endpoints) may be held only by the guard's
// wrappers and by the places listed here, each with its reason. A new
// model user wired with the raw client fails this test with its path.
func TestEveryModelUserGoesThroughTheGuard(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_EMBEDDING_MODEL"] = "text-embedding-3-small"
	c := e.openCore(t)
	allowed := map[string]string{
		"core.model": "readiness only (GET /models)",
		// media admits each transcription through its Spend (the guard),
		// checked below.
		"core.media.cfg.Transcriber": "transcriptions are admitted by media.Config.Spend",
	}
	raw := []reflect.Type{reflect.TypeOf((*openai.Client)(nil)), reflect.TypeOf((*openai.Audio)(nil))}
	var found []string
	w := &walker{seen: map[uintptr]bool{}, allowed: allowed, stop: func(t reflect.Type) bool {
		return t.PkgPath() == reflect.TypeOf(usage.Model{}).PkgPath() // the guard's wrappers hold it rightly
	}, hit: func(path string, t reflect.Type) {
		if slices.Contains(raw, t) {
			found = append(found, path)
		}
	}}
	w.walk("core", reflect.ValueOf(c), 0)
	slices.Sort(found)
	found = slices.Compact(found)
	var bypass []string
	for _, p := range found {
		if _, ok := allowed[p]; !ok {
			bypass = append(bypass, p)
		}
	}
	if len(bypass) > 0 {
		t.Fatalf("model clients reachable outside the guard:\n  %s", strings.Join(bypass, "\n  "))
	}
	if !slices.Contains(found, "core.model") {
		t.Fatalf("the walk did not reach the client (found %q): the test no longer sees the wiring", found)
	}
	if reflect.ValueOf(c.media).Elem().FieldByName("cfg").FieldByName("Spend").IsNil() {
		t.Fatal("media transcribes without the guard")
	}
	if w.n < 200 {
		t.Fatalf("the walk saw %d values: too few to trust", w.n)
	}
}

// openCore builds the core as `kairos chat` does (no bot), closed when
// the test ends.
func (e *env) openCore(tb testing.TB) *core {
	tb.Helper()
	m := e.main()
	if err := m.ParseFlags(context.Background(), []string{"chat"}); err != nil {
		tb.Fatal(err)
	}
	c, err := m.openCore(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return c
}

// walker visits what a value reaches through fields, pointers, slices,
// maps and interfaces, within Kairos's own types (closures are opaque to
// it: a part that reaches the model only through a func value is not
// seen, which is why the parts take their model as a field).
type walker struct {
	seen    map[uintptr]bool
	allowed map[string]string // paths not walked further
	stop    func(reflect.Type) bool
	hit     func(path string, t reflect.Type)
	n       int
}

func (w *walker) walk(path string, v reflect.Value, depth int) {
	if !v.IsValid() || depth > 30 {
		return
	}
	if _, ok := w.allowed[path]; ok {
		w.hit(path, v.Type())
		if v.Kind() == reflect.Interface && !v.IsNil() {
			w.hit(path, v.Elem().Type())
		}
		return
	}
	w.n++
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			w.hit(path, v.Elem().Type())
			w.walk(path, v.Elem(), depth+1)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		w.hit(path, v.Type())
		if w.seen[v.Pointer()] || !ours(v.Type().Elem()) || w.stop(v.Type().Elem()) {
			return
		}
		w.seen[v.Pointer()] = true
		w.walk(path, v.Elem(), depth+1)
	case reflect.Struct:
		if !ours(v.Type()) || w.stop(v.Type()) {
			return
		}
		for i := range v.NumField() {
			w.walk(path+"."+v.Type().Field(i).Name, v.Field(i), depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := range min(v.Len(), 64) {
			w.walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i), depth+1)
		}
	case reflect.Map:
		it := v.MapRange()
		for i := 0; it.Next() && i < 64; i++ {
			w.walk(path+"[…]", it.Value(), depth+1)
		}
	}
}

// ours reports whether t is Kairos's own (or unnamed: a slice or map of
// them), so the walk stays out of the libraries' insides.
func ours(t reflect.Type) bool {
	return t.PkgPath() == "" || strings.HasPrefix(t.PkgPath(), "github.com/kairos-agent/kairos")
}

// The tools' model calls are the turn's user's: two memories stored at
// once in a turn that crosses a 100-token cap make one embedding (counted
// against the user) and one is refused (before: both were made and
// neither was counted: the embeddings went around the guard).
func TestEmbeddingsCountAndAreRefusedAtTheCap(t *testing.T) {
	e := usageEnv(t, "access:\n  operators: [1001]\n  allowed_users: [2002]\nbudgets:\n  spend:\n    per_user:\n      \"2002\": {daily_tokens: 100}\n")
	e.vars["KAIROS_EMBEDDING_MODEL"] = "text-embedding-3-small"
	fact := strings.Repeat("The user's garden has tomatoes, beans and a fig tree by the wall. ", 6)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if len(r.ToolResults()) == 0 {
			args := func(s string) string {
				b, _ := json.Marshal(map[string]string{"action": "store", "store": "user_memory", "category": "fact", "content": s})
				return string(b)
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "memory", Arguments: args("A. " + fact)}, {Name: "memory", Arguments: args("B. " + fact)}},
				Usage: &testkit.Usage{PromptTokens: 40, CompletionTokens: 5}}
		}
		return testkit.Reply{Text: "noted", Usage: &testkit.Usage{PromptTokens: 40, CompletionTokens: 5}}
	})
	e.start()
	e.tg.PushText(2002, 2002, "remember my garden", time.Now())
	waitCount(t, e.tg, 2002, "You have reached your daily token limit of 100 tokens", 1)
	if n := len(e.llm.EmbeddingRequests()); n != 1 {
		t.Fatalf("%d embedding requests, want 1 (the second refused at the cap)", n)
	}
	e.out.Reset()
	if code := e.main().Main(context.Background(), []string{"usage", "--user", "2002"}); code != 0 {
		t.Fatalf("kairos usage: %d", code)
	}
	if !strings.Contains(e.out.String(), `"model": "text-embedding-3-small"`) {
		t.Fatalf("the embedding is not counted: %s", e.out.String())
	}
}
