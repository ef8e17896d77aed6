package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// Two replicas share one PostgreSQL in webhook mode; updates of one chat
// arrive alternately at either. Every update is answered once, in
// update_id order.
func TestReplicasKeepPerChatOrder(t *testing.T) {
	base := os.Getenv(storetest.EnvURL)
	if base == "" {
		t.Skip(storetest.EnvURL + " not set: no PostgreSQL server")
	}
	url := storetest.FreshSchemaURL(t, base)
	tg := testkit.NewFakeTelegram(t, "")
	pol := kairos.DefaultPolicy()
	pol.Access.AllowedUsers = []int64{1}
	var mu sync.Mutex
	var order []string
	var srvs []*httptest.Server
	for r := 0; r < 2; r++ {
		db, err := store.Open(context.Background(), store.Config{DatabaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ul := store.NewUpdateLog(db)
		b, err := bot.New(bot.Config{Token: tg.Token(), APIURL: tg.URL(), Policy: func() *kairos.Policy { return pol },
			Access: ul, Updates: ul, Settings: ul, SharedOrder: true, Limits: bot.Limits{PerChat: time.Millisecond, PerGroup: 6000, Global: 1000},
			Handler: handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
				time.Sleep(5 * time.Millisecond) // a turn takes time; replicas overlap
				mu.Lock()
				order = append(order, in.Text)
				mu.Unlock()
				return out.Final(ctx, "re: "+in.Text)
			}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.StartWebhook(context.Background(), "http://127.0.0.1/hook", "sec"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Shutdown(10 * time.Second) })
		srv := httptest.NewServer(b.WebhookHandler("sec"))
		t.Cleanup(srv.Close)
		srvs = append(srvs, srv)
	}
	const n = 12
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1800000000,"chat":{"id":1,"type":"private"},"from":{"id":1,"is_bot":false,"first_name":"A"},"text":"m%02d"}}`, i, i, i)
		req, _ := http.NewRequest(http.MethodPost, srvs[i%2].URL, strings.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "sec")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("update %d: status %d", i, resp.StatusCode)
		}
	}
	tg.MustWaitSentTo(1, n)
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("m%02d", i))
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("handled %v, want %v", order, want)
	}
	if got := len(tg.SentTo(1)); got != n {
		t.Fatalf("%d replies, want %d", got, n)
	}
}

// replicaLogs opens the same database n times, as n replicas would: a
// fresh PostgreSQL schema when KAIROS_TEST_DATABASE_URL is set, else one
// SQLite file in a temporary directory.
func replicaLogs(t *testing.T, n int) []*store.UpdateLog {
	t.Helper()
	cfg := store.Config{DataDir: t.TempDir()}
	if base := os.Getenv(storetest.EnvURL); base != "" {
		cfg = store.Config{DatabaseURL: storetest.FreshSchemaURL(t, base)}
	}
	var out []*store.UpdateLog
	for i := 0; i < n; i++ {
		db, err := store.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		out = append(out, store.NewUpdateLog(db))
	}
	return out
}

// pressOnKeyboard is an HTTP transport for the asking replica: when a
// sendMessage carrying approval buttons comes back from Telegram, it has
// the user press Approve, and waits until the press is answered, before
// the replica sees the response — the press reaches the other replica
// while the asker still waits for its keyboard's message id.
type pressOnKeyboard struct {
	tg      *testkit.FakeTelegram
	wait    context.Context // the test's deadline
	pressed sync.Once
	err     error
}

func (p *pressOnKeyboard) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/sendMessage") || !bytes.Contains(body, []byte("ap:")) {
		return resp, err
	}
	p.pressed.Do(func() {
		if _, p.err = p.tg.PressButton(1, 1, "Approve"); p.err != nil {
			return
		}
		_, p.err = p.tg.WaitCalls(p.wait, "answerCallbackQuery", 1)
	})
	return resp, nil
}

// TestApprovalPressOnOtherReplicaAtOnce: in webhook mode, the message
// reaches replica A and the Approve press reaches replica B the moment
// the keyboard exists, before A has its message id. The press finds the
// request (before the fix: "This request is no longer open."), A's turn
// continues once with the approval, and the keyboard closes.
func TestApprovalPressOnOtherReplicaAtOnce(t *testing.T) {
	tg := testkit.NewFakeTelegram(t, "")
	pol := kairos.DefaultPolicy()
	pol.Access.AllowedUsers = []int64{1}
	logs := replicaLogs(t, 2)
	press := &pressOnKeyboard{tg: tg, wait: testkit.Deadline(t)}
	decided := make(chan kairos.Decision, 2)
	var hooks []http.Handler
	var bots []*bot.Bot
	for r, ul := range logs {
		client := &http.Client{}
		if r == 0 {
			client.Transport = press
		}
		b, err := bot.New(bot.Config{Token: tg.Token(), APIURL: tg.URL(), HTTPClient: client, Policy: func() *kairos.Policy { return pol },
			Access: ul, Updates: ul, Settings: ul, Approvals: ul, Limits: bot.Limits{PerChat: time.Millisecond, PerGroup: 6000, Global: 1000},
			Handler: handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
				d, err := out.Approve(ctx, &kairos.ApprovalRequest{ID: "c1", Action: "memory.forget", Summary: "forget", Reason: "deletes data",
					ExpiresAt: time.Now().Add(time.Minute), State: []byte(`{"v":1}`)})
				if err != nil {
					return err
				}
				decided <- d
				return out.Final(ctx, "decision: "+d.Outcome)
			}}})
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, b.WebhookHandler("sec"))
		bots = append(bots, b)
		t.Cleanup(func() { b.Shutdown(10 * time.Second) })
	}
	// Messages go to replica A, button presses to replica B.
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		target := hooks[0]
		if bytes.Contains(body, []byte(`"callback_query"`)) {
			target = hooks[1]
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(router.Close)
	intake, stop := context.WithCancel(context.Background())
	t.Cleanup(stop) // runs before the Shutdowns: the sweepers end
	for _, b := range bots {
		if err := b.StartWebhook(intake, router.URL, "sec"); err != nil {
			t.Fatal(err)
		}
	}
	tg.PushText(1, 1, "forget it", time.Now())

	select {
	case d := <-decided:
		if d.Outcome != kairos.DecisionApproved {
			t.Fatalf("decision %+v", d)
		}
	case <-testkit.Deadline(t).Done():
		t.Fatalf("the turn was not continued; answers %+v, press %v", tg.CallbackAnswers(), press.err)
	}
	if press.err != nil {
		t.Fatal(press.err)
	}
	if ans := tg.CallbackAnswers(); len(ans) != 1 || ans[0].Text != "Approved." {
		t.Fatalf("press answered %+v", ans)
	}
	sent := tg.MustWaitSentTo(1, 2)
	if got := sent[1].LastText(); got != "decision: approved" {
		t.Fatalf("reply %q", got)
	}
	testkit.WaitFor(t, "the keyboard to close", func() bool { return len(tg.SentTo(1)[0].Buttons()) == 0 })
}

// pollReplica runs one polling replica on ul until the test ends or its
// stop function is called.
func pollReplica(t *testing.T, tg *testkit.FakeTelegram, ul *store.UpdateLog, id string, ttl time.Duration, h bot.Handler) (stop func()) {
	t.Helper()
	pol := kairos.DefaultPolicy()
	pol.Access.AllowedUsers = []int64{1, 2, 3}
	b, err := bot.New(bot.Config{Token: tg.Token(), APIURL: tg.URL(), Handler: h, Policy: func() *kairos.Policy { return pol },
		Access: ul, Updates: ul, Settings: ul, PollTimeout: time.Second, ReplicaID: id, LeaseTTL: ttl,
		Limits: bot.Limits{PerChat: time.Millisecond, PerGroup: 6000, Global: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx, 5*time.Second) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func conflicts(tg *testkit.FakeTelegram) int {
	n := 0
	for _, c := range tg.Calls("getUpdates") {
		if c.Status == http.StatusConflict {
			n++
		}
	}
	return n
}

// TestPollLeaseOneReplicaPolls: two polling replicas on one database. A
// poll lease left by a replica that died ("ghost") holds both back until
// it runs out; then exactly one polls (no 409s: before the lease, both
// polled and cut each other off), every message is answered once, and
// when the poller stops the other takes the poll over.
func TestPollLeaseOneReplicaPolls(t *testing.T) {
	const ttl = 1500 * time.Millisecond
	tg := testkit.NewFakeTelegram(t, "")
	logs := replicaLogs(t, 2)
	ctx := context.Background()
	if ok, err := logs[0].AcquireLease(ctx, kairos.PollLease, "ghost", ttl); err != nil || !ok {
		t.Fatalf("ghost lease: %v %v", ok, err)
	}
	tg.PushText(1, 1, "before takeover", time.Now())
	stops := []func(){
		pollReplica(t, tg, logs[0], "r1", ttl, echo()),
		pollReplica(t, tg, logs[1], "r2", ttl, echo()),
	}
	if got := tg.MustWaitSentTo(1, 1)[0].LastText(); got != "echo: before takeover" {
		t.Fatalf("reply %q", got)
	}
	for i := 0; i < 6; i++ {
		tg.PushText(int64(1+i%3), int64(1+i%3), fmt.Sprintf("m%d", i), time.Now())
	}
	tg.MustWaitSentTo(2, 2)
	tg.MustWaitSentTo(3, 2)
	tg.MustWaitSentTo(1, 3)
	// Whoever polls: stop both in turn; each time the other (or nobody)
	// goes on, and a message pushed meanwhile is answered once.
	stops[0]()
	tg.PushText(2, 2, "after the first stop", time.Now())
	if got := tg.MustWaitSentTo(2, 3)[2].LastText(); got != "echo: after the first stop" {
		t.Fatalf("reply %q", got)
	}
	if n := conflicts(tg); n != 0 {
		t.Fatalf("%d getUpdates calls ended in 409", n)
	}
	for _, chat := range []int64{1, 2, 3} {
		if n := len(tg.SentTo(chat)); n != map[int64]int{1: 3, 2: 3, 3: 2}[chat] {
			t.Fatalf("chat %d: %d replies", chat, n)
		}
	}
}

// TestDeadReplicasUpdatesClaimed: an update stored by a replica that died
// before finishing it (its heartbeat lease runs out) is claimed and
// answered by a live replica, without any restart, and only once. Before
// the fix it waited until some replica restarted.
func TestDeadReplicasUpdatesClaimed(t *testing.T) {
	const ttl = 1500 * time.Millisecond
	tg := testkit.NewFakeTelegram(t, "")
	logs := replicaLogs(t, 2)
	ctx := context.Background()
	var mu sync.Mutex
	handled := map[string]int{}
	h := handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
		mu.Lock()
		handled[in.Text]++
		mu.Unlock()
		return out.Final(ctx, "echo: "+in.Text)
	}}
	pollReplica(t, tg, logs[0], "r1", ttl, h)
	pollReplica(t, tg, logs[1], "r2", ttl, h)
	tg.PushText(1, 1, "first", time.Now())
	tg.MustWaitSentTo(1, 1)
	// A third replica stores an update, then dies before processing it.
	if ok, err := logs[0].AcquireLease(ctx, kairos.ReplicaLease("dead"), "dead", ttl); err != nil || !ok {
		t.Fatalf("dead replica's lease: %v %v", ok, err)
	}
	raw := `{"update_id":900,"message":{"message_id":900,"date":1800000000,"chat":{"id":1,"type":"private"},"from":{"id":1,"is_bot":false,"first_name":"A"},"text":"stored by the dead one"}}`
	if _, err := logs[0].SaveUpdates(ctx, []*kairos.RawUpdate{{UpdateID: 900, ChatID: 1, Payload: []byte(raw), ReceivedAt: time.Now(), Owner: "dead"}}); err != nil {
		t.Fatal(err)
	}
	if got := tg.MustWaitSentTo(1, 2)[1].LastText(); got != "echo: stored by the dead one" {
		t.Fatalf("reply %q", got)
	}
	tg.PushText(1, 1, "next", time.Now())
	tg.MustWaitSentTo(1, 3)
	if n := len(tg.SentTo(1)); n != 3 {
		t.Fatalf("%d replies", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if handled["stored by the dead one"] != 1 {
		t.Fatalf("handled %v", handled)
	}
	testkit.WaitFor(t, "every update done", func() bool {
		pending, err := logs[1].PendingUpdates(ctx, 0)
		return err == nil && len(pending) == 0
	})
}

// TestPairingLimitsSharedByReplicas: a stranger hears the refusal at
// most RefusalsPerUser times per window in total, whichever replicas
// their messages reach (before: each replica counted on its own, so every
// replica answered that many times).
func TestPairingLimitsSharedByReplicas(t *testing.T) {
	tg := testkit.NewFakeTelegram(t, "")
	pol := kairos.DefaultPolicy()
	pol.Access.Pairing = true
	logs := replicaLogs(t, 2)
	intake, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	var bots []*bot.Bot
	for _, ul := range logs {
		b, err := bot.New(bot.Config{Token: tg.Token(), APIURL: tg.URL(), Policy: func() *kairos.Policy { return pol }, Handler: echo(),
			Access: ul, Updates: ul, Settings: ul, Limits: bot.Limits{PerChat: time.Millisecond, PerGroup: 6000, Global: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.StartWebhook(intake, "http://127.0.0.1:1/hook", "sec"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Shutdown(10 * time.Second) })
		bots = append(bots, b)
	}
	const stranger = 777
	n := bot.RefusalsPerUser + 2
	for i := 1; i <= n; i++ {
		raw := fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1800000000,"chat":{"id":%d,"type":"private"},"from":{"id":%d,"is_bot":false,"first_name":"S"},"text":"let me in %d"}}`,
			i, i, stranger, stranger, i)
		// The first RefusalsPerUser reach replica 0, the rest replica 1.
		b := bots[0]
		if i > bot.RefusalsPerUser {
			b = bots[1]
		}
		if _, err := b.Ingest(context.Background(), []json.RawMessage{json.RawMessage(raw)}); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the update to be handled", func() bool {
			p, err := logs[0].PendingUpdates(context.Background(), 0)
			return err == nil && len(p) == 0
		})
	}
	if got := len(tg.SentTo(stranger)); got != bot.RefusalsPerUser {
		t.Fatalf("the stranger got %d refusals from two replicas, want %d", got, bot.RefusalsPerUser)
	}
}
