package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store/storetest"
)

// roundRobin is a load balancer in front of the replicas' webhook
// endpoints: request n goes to replica n mod len(targets).
type roundRobin struct {
	mu      sync.Mutex
	targets []string // base URLs, filled in as replicas come up
	n       int
	served  map[string]int
	order   []string // the target of each accepted post, in order
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rr.mu.Lock()
	if len(rr.targets) < 2 {
		rr.mu.Unlock()
		http.Error(w, "replicas starting", http.StatusServiceUnavailable) // Telegram retries
		return
	}
	target := rr.targets[rr.n%len(rr.targets)]
	rr.n++
	rr.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.Path, bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		rr.mu.Lock()
		rr.served[target]++
		rr.order = append(rr.order, target)
		rr.mu.Unlock()
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

var startedAddr = regexp.MustCompile(`msg="[^"]*started" .*http=(127\.0\.0\.1:\d+)`)

// waitAddr returns the admin HTTP address a replica logged at start.
func (p *proc) waitAddr(t *testing.T) string {
	t.Helper()
	ctx := testCtx(t) // the test's own deadline: a busy machine starts a replica slowly
	for {
		if m := startedAddr.FindStringSubmatch(p.logs.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-p.done:
			t.Fatalf("replica exited (%v):\n%s", err, p.logs.String())
		case <-ctx.Done():
			t.Fatalf("replica did not start:\n%s", p.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestReplicasShareOnePostgreSQLInWebhookMode runs two `kairos run`
// processes in webhook mode on one PostgreSQL database behind a
// round-robin balancer, so consecutive messages of a chat reach different
// replicas while the model takes a while to answer: every message is
// answered once, and each chat's answers come in the order of its
// messages.
func TestReplicasShareOnePostgreSQLInWebhookMode(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("subprocess replicas test")
	}
	base := os.Getenv(storetest.EnvURL)
	if base == "" {
		t.Skip(storetest.EnvURL + " not set: no PostgreSQL server")
	}
	const chats, perChat = 5, 8
	tg := testkit.NewFakeTelegram(t, "")
	llm := testkit.NewFakeOpenAI(t)
	llm.SetHandler(func(req testkit.ChatRequest) testkit.Reply {
		text := "echo: " + req.LastUserMessage()
		// Slow enough that a chat's next message reaches the other
		// replica while this turn still runs.
		return testkit.Reply{Text: text, Chunks: []string{text}, Delay: 40 * time.Millisecond}
	})
	rr := &roundRobin{served: map[string]int{}}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	var users []int64
	for c := 0; c < chats; c++ {
		users = append(users, int64(4001+c))
	}
	replicas := startWebhookReplicas(t, tg, llm, rr, lb.URL, storetest.FreshSchemaURL(t, base), users)

	want := map[int64][]string{}
	var texts []string
	for i := 0; i < perChat; i++ {
		for _, chat := range users {
			text := fmt.Sprintf("replica order %d message %02d", chat, i)
			want[chat] = append(want[chat], "echo: "+text)
			texts = append(texts, text)
			tg.PushText(chat, chat, text, time.Now())
		}
	}
	reply := func(s string) string { return "echo: " + s }
	if err := tg.WaitUntil(testCtx(t), func() bool {
		return len(countReplies(tg, texts, reply).complete) >= len(texts)
	}); err != nil {
		checkOnceEachInOrder(t, tg, texts, want) // says which are missing
		t.Fatalf("%d of %d messages answered: %v", len(countReplies(tg, texts, reply).complete), len(texts), err)
	}
	for _, p := range replicas {
		p.stop(t, syscall.SIGTERM)
	}
	checkOnceEachInOrder(t, tg, texts, want)
	rr.mu.Lock()
	defer rr.mu.Unlock()
	t.Logf("webhook posts accepted per replica: %v", rr.served)
	if len(rr.served) != 2 {
		t.Errorf("updates reached %d replicas, want both: %v", len(rr.served), rr.served)
	}
	if t.Failed() {
		logReplicas(t, replicas)
	}
}

// writeAllowPolicy writes a policy allowing users into dir and returns its
// path.
func writeAllowPolicy(t *testing.T, dir string, users ...int64) string {
	t.Helper()
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = fmt.Sprint(u)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("access:\n  allowed_users: ["+strings.Join(ids, ", ")+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return policy
}

// startWebhookReplicas starts two webhook-mode replicas on the database at
// dbURL behind rr (served at lbURL) for users, and waits until both have
// registered the webhook.
func startWebhookReplicas(t *testing.T, tg *testkit.FakeTelegram, llm *testkit.FakeOpenAI, rr *roundRobin, lbURL, dbURL string, users []int64) []*proc {
	bin := kairosBinary(t)
	dir := t.TempDir()
	policy := writeAllowPolicy(t, dir, users...)
	return startReplicaProcs(t, bin, tg, rr, lbURL, func(r int) map[string]string {
		return replicaVars(t, tg, llm, dir, policy, dbURL, r)
	})
}

// startReplicaProcs starts two webhook-mode replicas of bin with the
// variables varsFor gives each (plus the shared webhook URL and secret),
// puts them behind rr (served at lbURL), and waits until both have
// registered the webhook.
func startReplicaProcs(t *testing.T, bin string, tg *testkit.FakeTelegram, rr *roundRobin, lbURL string, varsFor func(r int) map[string]string) []*proc {
	var replicas []*proc
	for r := 0; r < 2; r++ {
		vars := varsFor(r)
		vars["KAIROS_WEBHOOK_URL"] = lbURL + bot.WebhookPath
		vars["KAIROS_WEBHOOK_SECRET"] = "replica-shared-secret"
		p := startProc(t, bin, vars)
		replicas = append(replicas, p)
		addr := p.waitAddr(t)
		rr.mu.Lock()
		rr.targets = append(rr.targets, "http://"+addr)
		rr.mu.Unlock()
	}
	if _, err := tg.WaitCalls(testCtx(t), "setWebhook", 2); err != nil {
		t.Fatalf("setWebhook: %v\n%s\n%s", err, replicas[0].logs.String(), replicas[1].logs.String())
	}
	return replicas
}

// checkOnceEachInOrder checks that each text was echoed once, nothing else
// was sent, and each chat got its echoes in the order want says.
func checkOnceEachInOrder(t *testing.T, tg *testkit.FakeTelegram, texts []string, want map[int64][]string) {
	t.Helper()
	tl := countReplies(tg, texts, func(s string) string { return "echo: " + s })
	for _, s := range texts {
		if n := tl.complete[s]; n != 1 {
			t.Errorf("%q answered %d times", s, n)
		}
	}
	if len(tl.other) > 0 {
		t.Errorf("unexpected bot messages: %q", tl.other)
	}
	for chat, w := range want {
		var got []string
		for _, m := range tg.SentTo(chat) {
			got = append(got, strings.TrimSpace(m.LastText()))
		}
		if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("chat %d answered out of order:\n got %q\nwant %q", chat, got, w)
		}
	}
}

// replicaVars are the environment of polling replica n on one database:
// PostgreSQL when KAIROS_TEST_DATABASE_URL is set, else one SQLite file
// that both open (then the replica ids are set, as the data directory
// they would be derived from is shared).
func replicaVars(t *testing.T, tg *testkit.FakeTelegram, llm *testkit.FakeOpenAI, dir, policy, dbURL string, n int) map[string]string {
	vars := map[string]string{
		"TELEGRAM_BOT_TOKEN": tg.Token(),
		"TELEGRAM_API_URL":   tg.URL(),
		"OPENAI_BASE_URL":    llm.URL(),
		"OPENAI_API_KEY":     "sk-test-replicas",
		"KAIROS_MODEL":       "test-model",
		"KAIROS_DATA_DIR":    filepath.Join(dir, "data"),
		"KAIROS_POLICY":      policy,
		"KAIROS_HTTP_ADDR":   "127.0.0.1:0",
		"KAIROS_SEARCH_URL":  "http://127.0.0.1:1",
		"KAIROS_SEND_LIMITS": "off",
		"KAIROS_REPLICA_ID":  fmt.Sprint("replica-", n),
	}
	if dbURL != "" {
		vars["KAIROS_DATABASE_URL"] = dbURL
		vars["KAIROS_DATA_DIR"] = filepath.Join(dir, fmt.Sprint("data", n))
		delete(vars, "KAIROS_REPLICA_ID") // derived from the data directory
	}
	return vars
}

// TestPollingReplicasHandOverAfterSIGKILL runs two `kairos run` in polling
// mode on one database. One holds the poll (the other stands by: no 409
// storm), and is killed with SIGKILL while a turn it stored is waiting on
// the model: the survivor takes the poll over, answers new messages, and
// finishes the dead replica's turn once its lease runs out — no restart.
func TestPollingReplicasHandOverAfterSIGKILL(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("subprocess replicas test")
	}
	tg := testkit.NewFakeTelegram(t, "")
	llm := testkit.NewFakeOpenAI(t)
	slowStarted := echoStallingFirstSlow(llm)
	reps := startPollingReplicas(t, tg, llm)
	dump := func() { logReplicas(t, reps) }
	tg.PushText(5001, 5001, "hello one", time.Now())
	tg.PushText(5002, 5002, "slow two", time.Now())
	select {
	case <-slowStarted:
	case <-testCtx(t).Done():
		dump()
		t.Fatal("the slow turn never reached the model")
	}
	if !waitText(t, tg, 5001, "echo: hello one") {
		dump()
		t.Fatal("no reply")
	}
	holder := pollHolder(reps)
	if holder < 0 {
		dump()
		t.Fatal("no replica holds the poll")
	}
	reps[holder].stop(t, syscall.SIGKILL)
	survivor := reps[1-holder]

	tg.PushText(5001, 5001, "after the kill", time.Now())
	for _, w := range []struct {
		chat int64
		text string
	}{{5001, "echo: after the kill"}, {5002, "echo: slow two"}} {
		if !waitText(t, tg, w.chat, w.text) {
			dump()
			t.Fatalf("chat %d never got %q", w.chat, w.text)
		}
	}
	survivor.stop(t, syscall.SIGTERM)
	checkOnceEachOneConflict(t, tg, "hello one", "slow two", "after the kill")
	if t.Failed() {
		dump()
	}
}

// echoStallingFirstSlow makes the model echo the user's message; the first
// request with "slow" in it never hears back (the returned channel closes
// when it arrives).
func echoStallingFirstSlow(llm *testkit.FakeOpenAI) <-chan struct{} {
	var slowOnce sync.Once
	slowStarted := make(chan struct{})
	llm.SetHandler(func(req testkit.ChatRequest) testkit.Reply {
		text := "echo: " + req.LastUserMessage()
		r := testkit.Reply{Text: text, Chunks: []string{text}}
		if strings.Contains(text, "slow") {
			slowOnce.Do(func() { // the first replica to ask never hears back
				close(slowStarted)
				r.Delay = time.Hour
			})
		}
		return r
	})
	return slowStarted
}

// startPollingReplicas starts two polling replicas on one database (a fresh
// PostgreSQL schema when KAIROS_TEST_DATABASE_URL is set) for users 5001
// and 5002.
func startPollingReplicas(t *testing.T, tg *testkit.FakeTelegram, llm *testkit.FakeOpenAI) []*proc {
	bin := kairosBinary(t)
	dir := t.TempDir()
	policy := writeAllowPolicy(t, dir, 5001, 5002)
	dbURL := ""
	if base := os.Getenv(storetest.EnvURL); base != "" {
		dbURL = storetest.FreshSchemaURL(t, base)
	}
	var reps []*proc
	for n := 0; n < 2; n++ {
		p := startProc(t, bin, replicaVars(t, tg, llm, dir, policy, dbURL, n))
		p.waitAddr(t)
		reps = append(reps, p)
	}
	return reps
}

func logReplicas(t *testing.T, reps []*proc) {
	for i, p := range reps {
		t.Logf("replica %d log:\n%s", i, p.logs.String())
	}
}

// pollHolder is the index of the replica whose log says it holds the poll
// lease, -1 when none does.
func pollHolder(reps []*proc) int {
	holder := -1
	for i, p := range reps {
		if strings.Contains(p.logs.String(), "holding the poll lease") {
			holder = i
		}
	}
	return holder
}

// checkOnceEachOneConflict checks that each message was echoed once and
// that at most one getUpdates call ended in 409: the dead holder's last
// poll, cut off by the survivor's first.
func checkOnceEachOneConflict(t *testing.T, tg *testkit.FakeTelegram, msgs ...string) {
	t.Helper()
	tl := countReplies(tg, msgs, func(s string) string { return "echo: " + s })
	for _, s := range msgs {
		if tl.complete[s] != 1 {
			t.Errorf("%q answered %d times", s, tl.complete[s])
		}
	}
	conflicts := 0
	for _, c := range tg.Calls("getUpdates") {
		if c.Status == 409 {
			conflicts++
		}
	}
	t.Logf("getUpdates calls %d, of which 409: %d", len(tg.Calls("getUpdates")), conflicts)
	if conflicts > 1 {
		t.Errorf("%d getUpdates calls ended in 409", conflicts)
	}
}

// waitText waits until a message to chat reads text, or reports false at
// the test's deadline.
func waitText(t *testing.T, tg *testkit.FakeTelegram, chat int64, text string) bool {
	return tg.WaitUntil(testCtx(t), func() bool {
		for _, m := range tg.SentTo(chat) {
			if strings.TrimSpace(m.LastText()) == text {
				return true
			}
		}
		return false
	}) == nil
}
