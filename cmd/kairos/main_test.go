package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/sandbox"
	"github.com/kairos-agent/kairos/store/storetest"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer = testkit.SyncBuffer

const operatorID = 1001

// env is a test environment: fakes plus the variables Main reads.
type env struct {
	t    *testing.T
	tg   *testkit.FakeTelegram
	llm  *testkit.FakeOpenAI
	vars map[string]string
	logs *syncBuffer
	out  *syncBuffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	parallel(t)
	e := &env{t: t, tg: testkit.NewFakeTelegram(t, ""), llm: testkit.NewFakeOpenAI(t), logs: &syncBuffer{}, out: &syncBuffer{}}
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	os.WriteFile(policy, []byte(fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\n", operatorID)), 0o600)
	e.vars = map[string]string{
		"TELEGRAM_BOT_TOKEN": e.tg.Token(),
		"TELEGRAM_API_URL":   e.tg.URL(),
		"OPENAI_BASE_URL":    e.llm.URL(),
		"KAIROS_MODEL":       "test-model",
		"KAIROS_DATA_DIR":    filepath.Join(dir, "data"),
		"KAIROS_POLICY":      policy,
		"KAIROS_HTTP_ADDR":   "127.0.0.1:0",
		"KAIROS_SEARCH_URL":  "http://127.0.0.1:1",
	}
	if u := os.Getenv(storetest.EnvURL); u != "" {
		e.vars["KAIROS_DATABASE_URL"] = storetest.FreshSchemaURL(t, u)
	}
	return e
}

// serialTests share something of the process or measure it: the CPU
// profile (one per process), the malloc arenas, Chromium (a busy two-core machine never
// starts two browsers at once, and a browser beside the parallel tests
// was starved past its deadline), a flood timed against a kill, the
// working directory (t.Chdir). They run alone, before the others; every
// other test of the package runs beside others (go test -parallel),
// since each has its own fakes, data directory and listener, and spends
// most of its time waiting (TestEveryTestRunsBesideOthersOrSaysWhy holds
// every test to one or the other).
var serialTests = map[string]bool{"TestCPUProfileWrittenAtExit": true, "TestPprofEndpointsOnlyWhenAsked": true,
	"TestProfilingConfig": true, "TestConsoleInBrowser": true, "TestConsolePagesInBrowser": true,
	"TestCrashMidFloodAnswersEachUpdateOnce": true, "TestDefaultPolicyPathMayBeAbsent": true,
	"TestEveryCommandWithNoDatabase": true, "TestMallocArenas": true}

var parallelOnce sync.Map // *testing.T → struct{}

// parallel marks t parallel once (a test may build two environments),
// unless its top-level test is serial.
func parallel(t *testing.T) {
	top, _, _ := strings.Cut(t.Name(), "/")
	if serialTests[top] {
		return
	}
	if _, dup := parallelOnce.LoadOrStore(t, struct{}{}); dup {
		return
	}
	t.Parallel()
}

// warmCells compiles the cell engine once per test process into a shared
// compilation cache, so no test waits for a first compile (20-50 s on a
// loaded 2-core machine).
var warmCells = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kairos-test-wazero-")
	if err != nil {
		return "", err
	}
	warmedDir = dir
	ctx := context.Background()
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: dir, PoolSize: -1})
	if err != nil {
		return dir, err
	}
	defer r.Close(ctx)
	return dir, r.Warm(ctx)
})

// warmedDir is removed when the test process ends (TestMain).
var warmedDir string

// testCtx is testkit.Deadline: it ends shortly before the test's own
// deadline (go test -timeout), so tests wait for events until then, not
// on fixed deadlines that a busy machine overruns.
func testCtx(t testing.TB) context.Context { return testkit.Deadline(t) }

func (e *env) main() *Main {
	cache, err := warmCells()
	if err != nil {
		e.t.Fatalf("warm the cell engine: %v", err)
	}
	return &Main{Stdin: strings.NewReader(""), Stdout: e.out, Stderr: e.logs, SandboxCacheDir: cache,
		Getenv: func(k string) string { return e.vars[k] }, Environ: func() []string {
			var kv []string
			for k, v := range e.vars {
				kv = append(kv, k+"="+v)
			}
			return kv
		}}
}

// start runs `kairos run` in the background until the test ends; it
// returns the admin HTTP address.
func (e *env) start() string {
	e.t.Helper()
	m := e.main()
	addr := make(chan string, 1)
	m.Started = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- m.Main(ctx, []string{"run"}) }()
	e.t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-testCtx(e.t).Done():
			e.t.Error("kairos run did not stop")
		}
	})
	select {
	case a := <-addr:
		return a
	case code := <-done:
		e.t.Fatalf("kairos run exited early with %d:\n%s", code, e.logs.String())
	case <-testCtx(e.t).Done():
		e.t.Fatalf("kairos run did not start:\n%s", e.logs.String())
	}
	return ""
}

func TestRunAnswersOnceWithClockEnvelope(t *testing.T) {
	e := newEnv(t)
	e.llm.Enqueue(testkit.TextReply("Hello! It is **morning** in your time zone."))
	e.start()
	date := time.Date(2026, 11, 21, 8, 15, 0, 0, time.UTC)
	e.tg.PushText(operatorID, operatorID, "good morning, what time is it?", date)
	waitReply(t, e.tg, operatorID, 1, "It is morning")
	req := e.llm.LastRequest()
	if req.LastUserMessage() != "good morning, what time is it?" {
		t.Fatalf("model saw %q", req.LastUserMessage())
	}
	sys := req.SystemPrompt()
	if !strings.Contains(sys, "2026-11-21T08:15:00") {
		t.Fatalf("system prompt lacks the turn time from the message date:\n%s", sys)
	}
	// Exactly one reply: wait for the update to be confirmed, then count.
	if err := e.tg.WaitConsumed(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(e.tg.SentTo(operatorID)); n != 1 {
		t.Fatalf("sent %d messages, want 1", n)
	}
}

func TestRunToolCallGoesRound(t *testing.T) {
	e := newEnv(t)
	e.llm.Enqueue(
		testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"store","store":"user_memory","category":"fact","content":"Birthday is May 3"}`}),
		testkit.TextReply("Noted: your birthday is May 3."),
	)
	e.start()
	e.tg.PushText(2002, 2002, "remember that my birthday is May 3", time.Now())
	waitReply(t, e.tg, 2002, 1, "Noted: your birthday is May 3.")
	reqs := e.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	res := reqs[1].ToolResults()
	if len(res) != 1 || !strings.Contains(res[0].Content, `"success":true`) {
		t.Fatalf("tool result = %+v", res)
	}
}

func TestRunModelFailureApologisesWithoutLeakingToken(t *testing.T) {
	e := newEnv(t)
	e.vars["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1" // nothing listens
	e.start()
	e.tg.PushText(operatorID, operatorID, "hello?", time.Now())
	sent := e.tg.MustWaitSentTo(operatorID, 1)
	if !strings.Contains(strings.ToLower(sent[0].LastText()), "sorry") {
		t.Fatalf("reply = %q", sent[0].LastText())
	}
	logs := e.logs.String()
	// An outage is not a fault of ours: a warning with its cause and code.
	if !regexp.MustCompile(`level=WARN msg=turn .*code=unavailable`).MatchString(logs) || strings.Contains(logs, "level=ERROR msg=turn") {
		t.Fatalf("the outage was not logged as a warning with its code:\n%s", logs)
	}
	if strings.Contains(logs, e.tg.Token()) {
		t.Fatalf("bot token in logs:\n%s", logs)
	}
}

func TestTelegramFailureIsLoggedWithoutToken(t *testing.T) {
	e := newEnv(t)
	e.tg.InjectNetworkError("getUpdates", 2)
	e.llm.Enqueue(testkit.TextReply("hi"))
	e.start()
	e.tg.PushText(operatorID, operatorID, "hello", time.Now())
	e.tg.MustWaitSentTo(operatorID, 1)
	if logs := e.logs.String(); strings.Contains(logs, e.tg.Token()) || !strings.Contains(logs, "getUpdates failed") {
		t.Fatalf("logs:\n%s", logs)
	}
}

func TestStrangerGetsPairingCodeAndNeverReachesModel(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.tg.PushText(5555, 5555, "hi, who are you?", time.Now())
	sent := e.tg.MustWaitSentTo(5555, 1)
	txt := sent[0].LastText()
	if !strings.Contains(txt, "5555") || !strings.Contains(txt, "pairing code") {
		t.Fatalf("reply = %q", txt)
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("a stranger reached the model (%d requests)", n)
	}
	// The operator pairs them with the code.
	code := txt[strings.LastIndex(txt, " ")+1:]
	e.llm.Enqueue(testkit.TextReply("welcome"))
	e.tg.PushText(operatorID, operatorID, "/pair "+code, time.Now())
	if got := e.tg.MustWaitSentTo(operatorID, 1)[0].LastText(); !strings.Contains(got, "5555 can now talk") {
		t.Fatalf("pair reply = %q", got)
	}
	// The grant is logged: who, by which operator (it was silent).
	if want := fmt.Sprintf(`msg="access granted by pairing" component=bot user=5555 by=%d`, operatorID); !strings.Contains(e.logs.String(), want) {
		t.Fatalf("logs lack %q:\n%s", want, e.logs.String())
	}
	e.tg.PushText(5555, 5555, "thanks", time.Now())
	waitReply(t, e.tg, 5555, 2, "welcome")
}

func TestHealthAndMetrics(t *testing.T) {
	e := newEnv(t)
	addr := e.start()
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": "kairos_updates_total"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
}

func TestMissingTokenExits2(t *testing.T) {
	e := newEnv(t)
	delete(e.vars, "TELEGRAM_BOT_TOKEN")
	if code := e.main().Main(context.Background(), []string{"run"}); code != 2 {
		t.Fatalf("exit = %d, want 2", code)
	}
	if !strings.Contains(e.logs.String(), "TELEGRAM_BOT_TOKEN") {
		t.Fatalf("message does not name the variable: %q", e.logs.String())
	}
}

func TestUsageErrors(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"frobnicate"}, nil, "unknown command"},
		{[]string{}, nil, "no command"},
		{[]string{"chat"}, map[string]string{"KAIROS_LOG_FORMAT": "xml"}, "KAIROS_LOG_FORMAT"},
		{[]string{"chat"}, map[string]string{"KAIROS_SEND_LIMITS": "maybe"}, "KAIROS_SEND_LIMITS"},
		{[]string{"run"}, map[string]string{"KAIROS_WEBHOOK_URL": "https://x.example/hook"}, "KAIROS_WEBHOOK_SECRET"},
		{[]string{"clock", "parse", "9am", "--at", "yesterday"}, nil, "--at"},
		{[]string{"chat"}, map[string]string{"KAIROS_EMBEDDING_MODEL": "text-embedding-3-small", "KAIROS_EMBEDDING_DIMENSIONS": "0"}, "KAIROS_EMBEDDING_DIMENSIONS must be"},
		{[]string{"chat"}, map[string]string{"KAIROS_EMBEDDING_DIMENSIONS": "256"}, "needs KAIROS_EMBEDDING_MODEL"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			e := newEnv(t)
			for k, v := range tc.env {
				e.vars[k] = v
			}
			if code := e.main().Main(context.Background(), tc.args); code != 2 {
				t.Fatalf("exit = %d, want 2; stderr %q", code, e.logs.String())
			}
			if !strings.Contains(e.logs.String(), tc.want) {
				t.Fatalf("stderr %q lacks %q", e.logs.String(), tc.want)
			}
		})
	}
}

func TestChatAnswersALine(t *testing.T) {
	e := newEnv(t)
	delete(e.vars, "TELEGRAM_BOT_TOKEN")
	e.llm.Enqueue(testkit.TextReply("Hi from the terminal."))
	m := e.main()
	m.Stdin = strings.NewReader("hello kairos\n")
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("exit = %d:\n%s", code, e.logs.String())
	}
	if !strings.Contains(e.out.String(), "Hi from the terminal.") {
		t.Fatalf("stdout = %q", e.out.String())
	}
	if got := e.llm.LastRequest().LastUserMessage(); got != "hello kairos" {
		t.Fatalf("model saw %q", got)
	}
}

func TestClockParseCommand(t *testing.T) {
	e := newEnv(t)
	code := e.main().Main(context.Background(), []string{"clock", "parse", "tomorrow 9am", "--tz", "America/New_York", "--at", "2026-03-07T12:00:00-05:00"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	var res struct {
		Kind  string `json:"kind"`
		Start string `json:"start"`
	}
	if err := json.Unmarshal([]byte(e.out.String()), &res); err != nil {
		t.Fatalf("output %q: %v", e.out.String(), err)
	}
	// 2026-03-08 is the US spring-forward day: 9am is EDT (-04:00).
	if res.Kind != "absolute" || res.Start != "2026-03-08T09:00:00-04:00" {
		t.Fatalf("result = %+v", res)
	}
}

func TestMigrateAndVersion(t *testing.T) {
	e := newEnv(t)
	if code := e.main().Main(context.Background(), []string{"migrate"}); code != 0 {
		t.Fatalf("migrate exit %d: %s", code, e.logs.String())
	}
	if !strings.Contains(e.out.String(), "schema at version") {
		t.Fatalf("migrate output %q", e.out.String())
	}
	if code := e.main().Main(context.Background(), []string{"version"}); code != 0 || !strings.Contains(e.out.String(), "kairos ") {
		t.Fatalf("version: %d %q", code, e.out.String())
	}
}

var _ = errors.New

// waitReply polls (with a deadline) until the chat's n-th message, after
// its edits, contains want; streamed answers arrive as a placeholder that
// is edited into the final text, and a placeholder is never the answer.
func waitReply(t *testing.T, tg *testkit.FakeTelegram, chat int64, n int, want string) string {
	t.Helper()
	var got string
	err := tg.WaitUntil(testCtx(t), func() bool {
		sent := tg.SentTo(chat)
		if len(sent) < n {
			return false
		}
		// A streamed answer's placeholder ends with " …" until the final
		// edit: what it says so far is not the answer (under load a test
		// could read "Results:  …" before the results).
		text := sent[n-1].LastText()
		if strings.HasSuffix(text, " …") && !strings.HasSuffix(want, "…") {
			return false
		}
		if strings.Contains(text, want) {
			got = text
			return true
		}
		return false
	})
	if err != nil {
		var texts []string
		for _, s := range tg.SentTo(chat) {
			texts = append(texts, s.LastText())
		}
		t.Fatalf("chat %d: message %d never contained %q; messages: %q", chat, n, want, texts)
	}
	return got
}

func TestNewSessionCarriesSummaryNotMessages(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if len(r.Tools) == 0 && strings.Contains(strings.ToLower(r.SystemPrompt()), "summar") {
			return testkit.TextReply("SUMMARY: the user planned a trip to Porto.")
		}
		return testkit.TextReply("ack " + r.LastUserMessage())
	})
	e.start()
	e.tg.PushText(2002, 2002, "I am planning a trip to Porto", time.Now())
	waitReply(t, e.tg, 2002, 1, "ack")
	e.tg.PushText(2002, 2002, "/newsession Lisbon plans", time.Now())
	waitReply(t, e.tg, 2002, 2, "Lisbon plans")
	e.tg.PushText(2002, 2002, "where was I going?", time.Now())
	waitReply(t, e.tg, 2002, 3, "ack where was I going?")
	last := e.llm.LastRequest()
	if !strings.Contains(last.SystemPrompt(), "SUMMARY: the user planned a trip to Porto.") {
		t.Fatalf("the new session lacks the previous summary:\n%s", last.SystemPrompt())
	}
	for _, m := range last.Messages[1:] {
		if strings.Contains(m.Content, "planning a trip to Porto") {
			t.Fatalf("the previous session's messages were carried over: %+v", last.Messages)
		}
	}
}

// A bad policy edit keeps the last good policy and the operators are told
// in Telegram; a good edit takes effect without a restart.
func TestPolicyHotReload(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("hi " + r.LastUserMessage()) })
	e.start()
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  operators: [1001]\n  alowed_users: [2002]\n"), 0o600)
	msg := waitReply(t, e.tg, operatorID, 1, "Policy reload rejected")
	if !strings.Contains(msg, ":3:3:") || !strings.Contains(msg, "alowed_users") {
		t.Fatalf("notice lacks the position: %q", msg)
	}
	// The last good policy still admits user 2002.
	e.tg.PushText(2002, 2002, "still here", time.Now())
	waitReply(t, e.tg, 2002, 1, "hi still here")
	// A good edit that admits 3003 applies live. Wait for it rather than
	// retry: a stranger hears the refusal bot.RefusalsPerUser times an
	// hour, so a reload slower than three refusals left the retries
	// unanswered.
	os.WriteFile(e.vars["KAIROS_POLICY"], []byte("access:\n  operators: [1001]\n  allowed_users: [2002, 3003]\n"), 0o600)
	waitLog(t, e, regexp.MustCompile(`msg="policy reloaded"`))
	e.tg.PushText(3003, 3003, "let me in", time.Now())
	waitReply(t, e.tg, 3003, 1, "hi let me in")
}
