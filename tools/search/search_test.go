package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/search"
)

const (
	braveKey  = "BSA-secret-brave-key-123"
	tavilyKey = "tvly-secret-tavily-key-456"
)

// searxngAnswer is shaped like SearXNG's JSON API (searx/webapp.py, format=json).
const searxngAnswer = `{
  "query": "kairos agent",
  "number_of_results": 0,
  "results": [
    {"url": "https://example.com/one", "title": "First &amp; <em>best</em>", "content": "The first   result\n about kairos.",
     "engine": "duckduckgo", "parsed_url": ["https", "example.com", "/one", "", "", ""], "template": "default.html",
     "engines": ["duckduckgo", "brave"], "positions": [1, 2], "publishedDate": null, "score": 4.0, "category": "general"},
    {"url": "https://example.com/two", "title": "Second", "content": "Second result.", "engine": "bing",
     "parsed_url": ["https", "example.com", "/two", "", "", ""], "template": "default.html", "engines": ["bing"],
     "positions": [2], "publishedDate": "2026-03-01T09:30:00", "score": 1.0, "category": "general"},
    {"url": "https://example.com/one", "title": "Duplicate", "content": "dup", "engine": "bing", "engines": ["bing"], "positions": [3], "score": 0.5, "category": "general"},
    {"url": "javascript:alert(1)", "title": "Hostile", "content": "x", "engine": "bing", "engines": ["bing"], "positions": [4], "score": 0.4, "category": "general"},
    {"url": "https://example.com/three", "title": "Third", "content": "Third result.", "engine": "bing", "engines": ["bing"], "positions": [5], "score": 0.3, "category": "general"}
  ],
  "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["kairos bot"], "unresponsive_engines": []
}`

func newSearXNG(t *testing.T, check func(r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if check != nil {
			check(r)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, searxngAnswer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func mustNew(t *testing.T, cfg search.Config) *search.Tool {
	t.Helper()
	tool, err := search.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tool
}

func call(t *testing.T, tool *search.Tool, args string) (*kairos.ToolResult, error) {
	t.Helper()
	return tool.Call(context.Background(), &kairos.ToolInvocation{Name: "search", Arguments: json.RawMessage(args)})
}

type answer struct {
	Results   []search.Result `json:"results"`
	Untrusted bool            `json:"untrusted"`
}

func decode(t *testing.T, res *kairos.ToolResult) answer {
	t.Helper()
	var a answer
	dec := json.NewDecoder(strings.NewReader(string(res.Content)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("result %s: %v", res.Content, err)
	}
	return a
}

func TestSearXNG(t *testing.T) {
	var gotQuery, gotCategories string
	srv := newSearXNG(t, func(r *http.Request) {
		gotQuery = r.URL.Query().Get("q")
		gotCategories = r.URL.Query().Get("categories")
	})
	tool := mustNew(t, search.Config{BaseURL: srv.URL + "/"})

	res, err := call(t, tool, `{"query":"  kairos agent & co  ","max_results":3}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Tainted {
		t.Error("result not tainted")
	}
	got := decode(t, res)
	want := answer{Untrusted: true, Results: []search.Result{
		{Title: "First & best", URL: "https://example.com/one", Snippet: "The first result about kairos."},
		{Title: "Second", URL: "https://example.com/two", Snippet: "Second result.", Date: "2026-03-01T09:30:00Z"},
		{Title: "Third", URL: "https://example.com/three", Snippet: "Third result."},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if gotQuery != "kairos agent & co" || gotCategories != "" {
		t.Errorf("request q=%q categories=%q", gotQuery, gotCategories)
	}

	if _, err := call(t, tool, `{"query":"kairos","type":"news"}`); err != nil {
		t.Fatal(err)
	}
	if gotCategories != "news" {
		t.Errorf("news search categories = %q, want news", gotCategories)
	}
}

func TestDefaultMaxResults(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`{"query":"x","results":[`)
		for i := range 12 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"url":"https://example.com/%d","title":"r%d","content":"c","publishedDate":null}`, i, i)
		}
		b.WriteString(`]}`)
		io.WriteString(w, b.String())
	}))
	defer srv.Close()
	tool := mustNew(t, search.Config{Provider: "searxng", BaseURL: srv.URL})
	for _, tc := range []struct {
		args string
		want int
	}{{`{"query":"x"}`, 5}, {`{"query":"x","max_results":10}`, 10}, {`{"query":"x","max_results":1}`, 1}} {
		res, err := call(t, tool, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(decode(t, res).Results); n != tc.want {
			t.Errorf("%s: %d results, want %d", tc.args, n, tc.want)
		}
	}
}

func TestBrave(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != braveKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"ErrorResponse","error":{"id":"x","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."}}`)
			return
		}
		if r.URL.Query().Get("count") != "2" {
			t.Errorf("count = %q, want 2", r.URL.Query().Get("count"))
		}
		switch r.URL.Path {
		case "/res/v1/web/search":
			io.WriteString(w, `{"type":"search","query":{"original":"go generics","more_results_available":true},
			  "mixed":{"type":"mixed","main":[{"type":"web","index":0,"all":false}]},
			  "web":{"type":"search","family_friendly":true,"results":[
			    {"title":"Tutorial: <strong>Generics</strong>","url":"https://go.dev/doc/tutorial/generics","is_source_local":false,"is_source_both":false,
			     "description":"Introduces the basics of <strong>generics</strong> in Go.","page_age":"2023-06-20T00:00:00","language":"en","family_friendly":true,
			     "type":"search_result","subtype":"generic","meta_url":{"scheme":"https","netloc":"go.dev","hostname":"go.dev","path":"› doc › tutorial"},"age":"June 20, 2023"},
			    {"title":"Go by Example","url":"https://gobyexample.com/generics","description":"Type parameters.","type":"search_result","subtype":"generic"},
			    {"title":"Third","url":"https://third.example/","description":"three","type":"search_result"}]}}`)
		case "/res/v1/news/search":
			io.WriteString(w, `{"type":"news","query":{"original":"go release"},"results":[
			    {"type":"news_result","title":"Go 1.26 released","url":"https://news.example/go126","description":"The <strong>Go</strong> team announced…",
			     "age":"2 hours ago","page_age":"2026-02-11T18:00:00","meta_url":{"scheme":"https","netloc":"news.example","hostname":"news.example"},"breaking":false},
			    {"type":"news_result","title":"Undated","url":"https://news.example/undated","description":"x","age":"3 days ago"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tool := mustNew(t, search.Config{Provider: "brave", BraveKey: braveKey, BaseURL: srv.URL})

	res, err := call(t, tool, `{"query":"go generics","max_results":2}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{
		{Title: "Tutorial: Generics", URL: "https://go.dev/doc/tutorial/generics", Snippet: "Introduces the basics of generics in Go.", Date: "2023-06-20T00:00:00Z"},
		{Title: "Go by Example", URL: "https://gobyexample.com/generics", Snippet: "Type parameters."},
	}
	if diff := cmp.Diff(want, decode(t, res).Results); diff != "" {
		t.Errorf("web (-want +got):\n%s", diff)
	}

	res, err = call(t, tool, `{"query":"go release","type":"news","max_results":2}`)
	if err != nil {
		t.Fatal(err)
	}
	want = []search.Result{
		{Title: "Go 1.26 released", URL: "https://news.example/go126", Snippet: "The Go team announced…", Date: "2026-02-11T18:00:00Z"},
		{Title: "Undated", URL: "https://news.example/undated", Snippet: "x", Date: "3 days ago"},
	}
	if diff := cmp.Diff(want, decode(t, res).Results); diff != "" {
		t.Errorf("news (-want +got):\n%s", diff)
	}

	bad := mustNew(t, search.Config{Provider: "brave", BraveKey: "wrong-key-789", BaseURL: srv.URL})
	_, err = call(t, bad, `{"query":"go","max_results":2}`)
	assertSafeError(t, err, "check its API key", "wrong-key-789", srv.URL)
}

func TestTavily(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+tavilyKey {
			t.Errorf("Authorization header = %q", r.Header.Get("Authorization"))
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("body: %v", err)
		}
		if body["api_key"] != tavilyKey || body["query"] != "eu ai act" || body["max_results"] != 4.0 {
			t.Errorf("body = %v", body)
		}
		topic := body["topic"]
		answer := `{"query":"eu ai act","follow_up_questions":null,"answer":null,"images":[],"response_time":0.92,"results":[
		  {"title":"EU AI Act","url":"https://artificialintelligenceact.eu/","content":"The AI Act is a European regulation on artificial intelligence.","score":0.98,"raw_content":null},
		  {"title":"Timeline","url":"https://example.eu/timeline","content":"Key dates.","score":0.71,"raw_content":null}]}`
		if topic == "news" {
			answer = `{"query":"eu ai act","follow_up_questions":null,"answer":null,"images":[],"response_time":1.1,"results":[
			  {"title":"AI Act obligations start","url":"https://news.example/ai-act","content":"Obligations apply from August.","score":0.9,"published_date":"Mon, 02 Feb 2026 10:00:00 GMT","raw_content":null}]}`
		} else if topic != "general" {
			t.Errorf("topic = %v", topic)
		}
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	tool := mustNew(t, search.Config{Provider: "Tavily", TavilyKey: tavilyKey, BaseURL: srv.URL})

	res, err := call(t, tool, `{"query":"eu ai act","max_results":4}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{
		{Title: "EU AI Act", URL: "https://artificialintelligenceact.eu/", Snippet: "The AI Act is a European regulation on artificial intelligence."},
		{Title: "Timeline", URL: "https://example.eu/timeline", Snippet: "Key dates."},
	}
	if diff := cmp.Diff(want, decode(t, res).Results); diff != "" {
		t.Errorf("web (-want +got):\n%s", diff)
	}
	res, err = call(t, tool, `{"query":"eu ai act","type":"news","max_results":4}`)
	if err != nil {
		t.Fatal(err)
	}
	want = []search.Result{{Title: "AI Act obligations start", URL: "https://news.example/ai-act", Snippet: "Obligations apply from August.", Date: "2026-02-02T10:00:00Z"}}
	if diff := cmp.Diff(want, decode(t, res).Results); diff != "" {
		t.Errorf("news (-want +got):\n%s", diff)
	}
}

func TestDuckDuckGo(t *testing.T) {
	page, err := os.ReadFile("testdata/duckduckgo.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/html/" || r.URL.Query().Get("q") != "golang generics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Write(page)
	}))
	defer srv.Close()
	tool := mustNew(t, search.Config{Provider: "duckduckgo", BaseURL: srv.URL})
	res, err := call(t, tool, `{"query":"golang generics"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{
		{Title: "Tutorial: Getting started with generics - The Go Programming Language", URL: "https://go.dev/doc/tutorial/generics",
			Snippet: "This tutorial introduces the basics of generics in Go. With generics, you can declare and use functions or types that are written to work with any of a set of types & more."},
		{Title: "Go by Example: Generics", URL: "https://gobyexample.com/generics", Snippet: "Starting with version 1.18, Go has added support for generics, also known as type parameters."},
		{Title: "Café \"generics\" — notes", URL: "https://www.example.org/a?x=1&y=é", Snippet: "A snippet in a table cell."},
	}
	if diff := cmp.Diff(want, decode(t, res).Results); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDuckDuckGoChallenge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></body></html>`)
	}))
	defer srv.Close()
	tool := mustNew(t, search.Config{Provider: "duckduckgo", BaseURL: srv.URL})
	_, err := call(t, tool, `{"query":"x"}`)
	assertSafeError(t, err, "bot challenge", srv.URL)
}

func assertSafeError(t *testing.T, err error, wantMsg string, forbidden ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if kairos.ErrorCode(err) != kairos.EUNAVAILABLE {
		t.Errorf("code = %q, want %q (%v)", kairos.ErrorCode(err), kairos.EUNAVAILABLE, err)
	}
	msg := kairos.ErrorMessage(err)
	if !strings.Contains(msg, wantMsg) {
		t.Errorf("message %q does not contain %q", msg, wantMsg)
	}
	for _, f := range forbidden {
		if strings.Contains(err.Error(), f) {
			t.Errorf("error %q leaks %q", err.Error(), f)
		}
	}
}

func TestProviderFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantMsg string
	}{
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusBadGateway) }, "failed (HTTP 502)"},
		{"rate limit", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "slow down", http.StatusTooManyRequests) }, "rate limiting"},
		{"json disabled", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "forbidden", http.StatusForbidden) }, "enable the json format"},
		{"not json", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>hello</html>") }, "unreadable answer"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			// Only the timeout case needs a short timeout; the others must
			// not hit it on a loaded machine under -race.
			timeout := 10 * time.Second
			if tc.name == "timeout" {
				timeout = 50 * time.Millisecond
			}
			tool := mustNew(t, search.Config{BaseURL: srv.URL, Timeout: timeout})
			_, err := call(t, tool, `{"query":"secret-query-text"}`)
			assertSafeError(t, err, tc.wantMsg, srv.URL, "secret-query-text")
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL
		srv.Close()
		tool := mustNew(t, search.Config{Provider: "tavily", TavilyKey: tavilyKey, BaseURL: base})
		_, err := call(t, tool, `{"query":"x"}`)
		assertSafeError(t, err, "unreachable", base, tavilyKey)
	})

	t.Run("canceled", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer srv.Close()
		tool := mustNew(t, search.Config{BaseURL: srv.URL})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := tool.Search(ctx, search.Request{Query: "x"})
		if err == nil || kairos.ErrorCode(err) == kairos.EUNAVAILABLE {
			t.Errorf("canceled search: %v, want a cancellation error", err)
		}
	})
}

func TestArguments(t *testing.T) {
	srv := newSearXNG(t, nil)
	tool := mustNew(t, search.Config{BaseURL: srv.URL})
	tests := []struct {
		args    string
		wantErr string
	}{
		{`{"query":"ok"}`, ""},
		{`{"query":"ok","type":"web","max_results":10}`, ""},
		{`{}`, `"query" is required`},
		{`{"query":"   "}`, `"query" is required`},
		{`{"query":"` + strings.Repeat("é", 401) + `"}`, "longer than 400"},
		{`{"query":"ok","max_results":0}`, "out of range 1..10"},
		{`{"query":"ok","max_results":11}`, "out of range 1..10"},
		{`{"query":"ok","max_results":-1}`, "out of range 1..10"},
		{`{"query":"ok","max_results":2.5}`, "expected an integer"},
		{`{"query":"ok","type":"images"}`, `"images" is not one of web, news`},
		{`{"query":"ok","lang":"en"}`, `unknown argument "lang"`},
		{`{"query":["a"]}`, `"query": expected a string`},
		{`not json`, "JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			inv := &kairos.ToolInvocation{Arguments: json.RawMessage(tc.args)}
			act, aerr := tool.Action(context.Background(), inv)
			_, cerr := tool.Call(context.Background(), inv)
			if tc.wantErr == "" {
				if aerr != nil || cerr != nil {
					t.Fatalf("Action: %v, Call: %v", aerr, cerr)
				}
				if act != (kairos.ToolAction{Name: "search", Capability: "search"}) {
					t.Errorf("Action = %+v", act)
				}
				return
			}
			for _, err := range []error{aerr, cerr} {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.wantErr) {
					t.Errorf("error = %v, want EINVALID containing %q", err, tc.wantErr)
				}
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     search.Config
		wantErr string
		want    string
	}{
		{name: "default", cfg: search.Config{}, want: "searxng"},
		{name: "duckduckgo", cfg: search.Config{Provider: " DuckDuckGo "}, want: "duckduckgo"},
		{name: "unknown", cfg: search.Config{Provider: "google"}, wantErr: `unknown search provider "google"`},
		{name: "brave without key", cfg: search.Config{Provider: "brave"}, wantErr: "BRAVE_API_KEY"},
		{name: "tavily without key", cfg: search.Config{Provider: "tavily"}, wantErr: "TAVILY_API_KEY"},
		{name: "bad url", cfg: search.Config{BaseURL: "ftp://x"}, wantErr: "http(s) URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := search.New(tc.cfg)
			if tc.wantErr != "" {
				if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), tc.wantErr) {
					t.Fatalf("New = %v, want EINVALID containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tool.Provider() != tc.want {
				t.Errorf("Provider = %q, want %q", tool.Provider(), tc.want)
			}
		})
	}
}

func TestSpec(t *testing.T) {
	tool := mustNew(t, search.Config{})
	spec := tool.Spec()
	if spec.Name != "search" {
		t.Errorf("name = %q", spec.Name)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range schema.Properties {
		names = append(names, n)
	}
	if len(names) != 3 || schema.Properties["query"] == nil || schema.Properties["type"] == nil || schema.Properties["max_results"] == nil {
		t.Errorf("properties = %v, want exactly query, type, max_results", names)
	}
	// Budget: about 250 tokens per schema (≈ 4 characters per token).
	if n := len(spec.Description) + len(spec.Parameters); n > 1000 {
		t.Errorf("spec is %d characters, budget 1000", n)
	}
}

// Probe is one small search through the provider's own request: nil when
// it answers, the tool's error (naming the JSON API for SearXNG) when not.
func TestProbe(t *testing.T) {
	status := http.StatusOK
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Path + "?" + r.URL.RawQuery
		w.WriteHeader(status)
		w.Write([]byte(`{"results":[]}`))
	}))
	defer srv.Close()
	tool, err := search.New(search.Config{Provider: search.ProviderSearXNG, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.Probe(context.Background()); err != nil || !strings.Contains(asked, "/search?") || !strings.Contains(asked, "format=json") {
		t.Fatalf("probe of a working SearXNG: %v (asked %s)", err, asked)
	}
	status = http.StatusForbidden
	if err := tool.Probe(context.Background()); err == nil || !strings.Contains(kairos.ErrorMessage(err), "json format") {
		t.Fatalf("probe of a SearXNG without the JSON API: %v", err)
	}
}
