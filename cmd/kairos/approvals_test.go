package main

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// approvalModel scripts the model for the approval tests: "remember …"
// stores a memory, "forget …" calls memory.forget on it (an action the
// default policy makes wait for Approve/Deny), and the forget's result is
// reported back word for word.
func approvalModel(r testkit.ChatRequest) testkit.Reply {
	last := r.Messages[len(r.Messages)-1]
	switch {
	case last.Role == "user" && strings.Contains(last.Content, "remember"):
		return testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"store","store":"user_memory","category":"fact","content":"Lives in Lisbon"}`})
	case last.Role == "user" && strings.Contains(last.Content, "forget"):
		id := ""
		for _, m := range r.Messages {
			if mm := memID.FindStringSubmatch(m.Content); mm != nil && m.Role == "tool" {
				id = mm[1]
			}
		}
		return testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"forget","memory_id":"` + id + `"}`})
	case last.Role == "tool":
		prev := r.Messages[len(r.Messages)-2]
		if len(prev.ToolCalls) > 0 && strings.Contains(prev.ToolCalls[0].Arguments, "forget") {
			return testkit.TextReply("Forget outcome: " + last.Content)
		}
		return testkit.TextReply("Done: stored")
	default:
		return testkit.TextReply("Done: " + last.Content)
	}
}

const approvalChat = 2002

var approveData = regexp.MustCompile(`"callback_data":"(ap:[0-9a-f]+):y"`)

// approvalRig is one data directory (or PostgreSQL schema) shared by the
// `kairos run` processes of a test.
type approvalRig struct {
	tg   *testkit.FakeTelegram
	llm  *testkit.FakeOpenAI
	vars map[string]string
}

func newApprovalRig(t *testing.T, policyExtra string) *approvalRig {
	t.Helper()
	rig := &approvalRig{tg: testkit.NewFakeTelegram(t, ""), llm: testkit.NewFakeOpenAI(t)}
	rig.llm.SetHandler(approvalModel)
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	body := fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [%d, 2003]\n%s", operatorID, approvalChat, policyExtra)
	if err := os.WriteFile(policy, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	rig.vars = map[string]string{
		"TELEGRAM_BOT_TOKEN": rig.tg.Token(),
		"TELEGRAM_API_URL":   rig.tg.URL(),
		"OPENAI_BASE_URL":    rig.llm.URL(),
		"OPENAI_API_KEY":     "sk-test-approvals",
		"KAIROS_MODEL":       "test-model",
		"KAIROS_DATA_DIR":    filepath.Join(dir, "data"),
		"KAIROS_POLICY":      policy,
		"KAIROS_HTTP_ADDR":   "127.0.0.1:0",
		"KAIROS_SEARCH_URL":  "http://127.0.0.1:1",
	}
	if u := os.Getenv(storetest.EnvURL); u != "" {
		rig.vars["KAIROS_DATABASE_URL"] = storetest.FreshSchemaURL(t, u)
	}
	return rig
}

// db opens the rig's database (the processes keep running).
func (rig *approvalRig) db(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{DataDir: rig.vars["KAIROS_DATA_DIR"],
		DatabaseURL: rig.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// count runs SELECT COUNT(*) FROM table WHERE where.
func count(t *testing.T, db *store.DB, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	q := db.Gorm().Table(table)
	if where != "" {
		q = q.Where(where, args...)
	}
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// pauseForApproval stores a memory, asks to forget it and waits until
// the approval keyboard is out and the paused turn is in the database.
// It returns the keyboard message and its Approve callback data.
func (rig *approvalRig) pauseForApproval(t *testing.T, db func() *store.DB) (testkit.SentMessage, string) {
	t.Helper()
	rig.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
	waitReply(t, rig.tg, approvalChat, 1, "Done")
	rig.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	waitReply(t, rig.tg, approvalChat, 2, "Approval needed")
	kb := rig.tg.SentTo(approvalChat)[1]
	if got := strings.Join(kb.Buttons(), ","); got != "Approve,Allow 1h,Always here,Deny" {
		t.Fatalf("keyboard buttons = %q", got)
	}
	m := approveData.FindStringSubmatch(string(kb.ReplyMarkup))
	if m == nil {
		t.Fatalf("no approve callback in %s", kb.ReplyMarkup)
	}
	d := db()
	waitFor(t, "the paused turn in the database", func() bool {
		return count(t, d, "approvals", "status = ? AND state <> ? AND message_id <> 0", "pending", "") == 1
	})
	return kb, m[1]
}

// waitFor polls cond until the test's deadline (testkit.WaitFor).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, what, cond)
}

func callbackTexts(tg *testkit.FakeTelegram) []string {
	var out []string
	for _, a := range tg.CallbackAnswers() {
		out = append(out, a.Text)
	}
	return out
}

func textsTo(tg *testkit.FakeTelegram, chat int64) []string {
	var out []string
	for _, m := range tg.SentTo(chat) {
		out = append(out, m.LastText())
	}
	return out
}

func countContaining(texts []string, sub string) int {
	n := 0
	for _, s := range texts {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// TestApprovalSurvivesRestart pauses a turn for approval, stops `kairos
// run` (SIGKILL, or SIGTERM: the waiting turn leaves at once, its row
// stays), starts it again and presses Approve: the approved call runs
// once, the model is called once more, the answer reaches the thread
// once, and a second press changes nothing.
func TestApprovalSurvivesRestart(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	bin := kairosBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { approvalRestart(t, bin, sig) })
	}
}

func approvalRestart(t *testing.T, bin string, sig syscall.Signal) {
	rig := newApprovalRig(t, "")
	first := startProc(t, bin, rig.vars)
	var db *store.DB
	kb, data := rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })
	first.stop(t, sig)
	before := len(rig.llm.Requests())

	second := startProc(t, bin, rig.vars)
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Approve"); err != nil {
		t.Fatal(err)
	}
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")
	// A second press of the (now removed) button, as a stale client
	// would send it.
	rig.tg.PushCallback(approvalChat, approvalChat, kb.MessageID, data+":y")
	waitFor(t, "two callback answers", func() bool { return len(rig.tg.CallbackAnswers()) >= 2 })
	second.stop(t, syscall.SIGTERM)

	texts := textsTo(rig.tg, approvalChat)
	t.Logf("chat: %q; callback answers: %q", texts, callbackTexts(rig.tg))
	if len(texts) != 3 || countContaining(texts, "Forget outcome") != 1 {
		t.Errorf("messages = %q, want the stored reply, the keyboard and one answer", texts)
	}
	if strings.Contains(texts[2], "did not approve") || !strings.Contains(texts[2], "success") {
		t.Errorf("the resumed call did not run as approved: %q", texts[2])
	}
	final := rig.tg.SentTo(approvalChat)[1]
	if len(final.Buttons()) != 0 || !strings.Contains(final.LastText(), "Approved") {
		t.Errorf("keyboard after the decision: buttons %q, text %q", final.Buttons(), final.LastText())
	}
	if got := callbackTexts(rig.tg); strings.Join(got, "|") != "Approved.|Already approved." {
		t.Errorf("callback answers = %q", got)
	}
	after := rig.llm.Requests()[before:]
	if len(after) != 1 {
		t.Errorf("model called %d times after the restart, want 1 (the continuation)", len(after))
	}
	if n := count(t, db, "memories", ""); n != 0 {
		t.Errorf("%d memories after the approved forget, want 0", n)
	}
	if n := count(t, db, "messages", "role = ? AND content = ?", "user", "forget where I live"); n != 1 {
		t.Errorf("the paused turn's user message stored %d times, want 1", n)
	}
	if n := count(t, db, "approvals", "status = ? AND claimed_by = ? AND state = ?", "approved", "resumer", ""); n != 1 {
		t.Errorf("approval rows approved and resumed after the restart: %d, want 1", n)
	}
	if t.Failed() {
		t.Logf("second process:\n%s", second.logs.String())
	}
}

// TestApprovalExpiredDuringDowntime kills `kairos run` while a turn waits
// for approval and restarts it after the request's expiry: the keyboard
// is edited, the user is told once, nothing is done, and a late press is
// refused.
func TestApprovalExpiredDuringDowntime(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	bin := kairosBinary(t)
	// The request may not expire while the first process runs (it would
	// expire it itself): with an 8 s timeout a loaded machine's pause and
	// kill could outlast it. So the timeout is an hour, and the downtime
	// outlasts it by moving the stored expiry into the past while no
	// process runs (the restart reads the request's expiry from its row).
	rig := newApprovalRig(t, "approvals:\n  timeout: PT1H\n")
	first := startProc(t, bin, rig.vars)
	var db *store.DB
	kb, data := rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })
	first.stop(t, syscall.SIGKILL)
	before := len(rig.llm.Requests())
	past := time.Now().Add(-time.Second).UnixMilli()
	res := db.Gorm().Exec("UPDATE approvals SET expires_at = ? WHERE status = 'pending' AND expires_at > ?", past, past)
	if res.Error != nil || res.RowsAffected != 1 {
		t.Fatalf("moving the pending approval's expiry into the past: %d rows, %v", res.RowsAffected, res.Error)
	}

	second := startProc(t, bin, rig.vars)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("second process log:\n%s", second.logs.String())
		}
	})
	waitReply(t, rig.tg, approvalChat, 3, "expired before anyone answered")
	rig.tg.PushCallback(approvalChat, approvalChat, kb.MessageID, data+":y")
	waitFor(t, "a callback answer", func() bool { return len(rig.tg.CallbackAnswers()) >= 1 })
	second.stop(t, syscall.SIGTERM)

	texts := textsTo(rig.tg, approvalChat)
	t.Logf("chat: %q; callback answers: %q", texts, callbackTexts(rig.tg))
	if len(texts) != 3 || countContaining(texts, "expired before anyone answered") != 1 {
		t.Errorf("messages = %q, want the stored reply, the keyboard and one expiry notice", texts)
	}
	k := rig.tg.SentTo(approvalChat)[1]
	if len(k.Buttons()) != 0 || !strings.Contains(k.LastText(), "Expired") {
		t.Errorf("keyboard after expiry: buttons %q, text %q", k.Buttons(), k.LastText())
	}
	if got := callbackTexts(rig.tg); len(got) != 1 || got[0] != "This request has expired." {
		t.Errorf("late press answered %q", got)
	}
	if n := len(rig.llm.Requests()) - before; n != 0 {
		t.Errorf("model called %d times after the restart, want 0", n)
	}
	if n := count(t, db, "memories", ""); n != 1 {
		t.Errorf("%d memories after the expired forget, want 1", n)
	}
}

// TestApprovalRefusesOthersAndDecidesOnce runs the real Main in process:
// a stranger's and another allowed user's presses are refused, and two
// presses by the asked user in a row (Approve then Deny) decide once.
func TestApprovalRefusesOthersAndDecidesOnce(t *testing.T) {
	parallel(t)
	rig := newApprovalRig(t, "")
	e := &env{t: t, tg: rig.tg, llm: rig.llm, vars: rig.vars, logs: &syncBuffer{}, out: &syncBuffer{}}
	e.start()
	var db *store.DB
	rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })

	for _, user := range []int64{9999, 2003} {
		if _, err := rig.tg.PressButton(approvalChat, user, "Approve"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "two refusals", func() bool { return len(rig.tg.CallbackAnswers()) >= 2 })
	for _, a := range callbackTexts(rig.tg) {
		if a != "Only the person who asked, or an operator, can decide." {
			t.Errorf("a press by someone else was answered %q", a)
		}
	}
	if n := count(t, db, "approvals", "status = ?", "pending"); n != 1 {
		t.Fatalf("after the others' presses %d requests pending, want 1", n)
	}
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Approve"); err != nil {
		t.Fatal(err)
	}
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Deny"); err != nil {
		t.Fatal(err)
	}
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")
	waitFor(t, "four callback answers", func() bool { return len(rig.tg.CallbackAnswers()) >= 4 })
	got := callbackTexts(rig.tg)[2:]
	t.Logf("the asked user's presses were answered %q", got)
	decided := 0
	for _, a := range got {
		if a == "Approved." || a == "Denied." {
			decided++
		}
	}
	if decided != 1 || countContaining(got, "Already") != 1 {
		t.Errorf("two presses answered %q, want one decision and one 'Already …'", got)
	}
	texts := textsTo(rig.tg, approvalChat)
	if len(texts) != 3 {
		t.Errorf("messages = %q, want one answer", texts)
	}
	// The waiter may answer before the pressing goroutine's edit lands.
	waitFor(t, "the keyboard to close", func() bool { return len(rig.tg.SentTo(approvalChat)[1].Buttons()) == 0 })
	// The turn parked (its chat was free meanwhile); the press resumed it.
	if n := count(t, db, "approvals", "status <> ? AND claimed_by = ?", "pending", "resumer"); n != 1 {
		t.Errorf("%d requests decided and continued by the resumed turn, want 1", n)
	}
}

// pressedOnReplicas starts two replicas of a fresh rig (skipping without
// PostgreSQL), pauses a forget for approval, presses the button named
// press and waits for the forget's answer.
func pressedOnReplicas(t *testing.T, press string) (*approvalRig, *roundRobin, []*proc, *store.DB) {
	t.Helper()
	if testing.Short() {
		t.Skip("subprocess replicas test")
	}
	if os.Getenv(storetest.EnvURL) == "" {
		t.Skip(storetest.EnvURL + " not set: no PostgreSQL server")
	}
	rig := newApprovalRig(t, "")
	rr, replicas := rig.startReplicas(t)
	var db *store.DB
	rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, press); err != nil {
		t.Fatal(err)
	}
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")
	return rig, rr, replicas, db
}

// startReplicas starts two `kairos run` replicas of the rig (on its
// PostgreSQL schema, each with a data directory of its own) behind a
// round-robin webhook balancer.
func (rig *approvalRig) startReplicas(t *testing.T) (*roundRobin, []*proc) {
	t.Helper()
	bin := kairosBinary(t)
	rr := &roundRobin{served: map[string]int{}}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	return rr, startReplicaProcs(t, bin, rig.tg, rr, lb.URL, func(r int) map[string]string {
		vars := maps.Clone(rig.vars)
		vars["KAIROS_DATA_DIR"] = filepath.Join(t.TempDir(), fmt.Sprint("data", r))
		return vars
	})
}

// TestApprovalAcrossReplicas runs two `kairos run` replicas on one
// PostgreSQL database behind a round-robin webhook balancer: the turn
// waits on one replica, the button press reaches the other, and the
// waiting turn learns the decision from the database and finishes once.
func TestApprovalAcrossReplicas(t *testing.T) {
	parallel(t)
	rig, rr, replicas, db := pressedOnReplicas(t, "Approve")
	for _, p := range replicas {
		p.stop(t, syscall.SIGTERM)
	}
	rr.mu.Lock()
	order := append([]string(nil), rr.order...)
	rr.mu.Unlock()
	t.Logf("updates by replica: %q", order)
	if len(order) < 3 || order[1] == order[2] {
		t.Fatalf("the press did not reach the other replica than the paused turn: %q", order)
	}
	texts := textsTo(rig.tg, approvalChat)
	if len(texts) != 3 || countContaining(texts, "Forget outcome") != 1 {
		t.Errorf("messages = %q, want one answer", texts)
	}
	if k := rig.tg.SentTo(approvalChat)[1]; len(k.Buttons()) != 0 || !strings.Contains(k.LastText(), "Approved") {
		t.Errorf("keyboard after the decision: buttons %q, text %q", k.Buttons(), k.LastText())
	}
	if n := count(t, db, "memories", ""); n != 0 {
		t.Errorf("%d memories after the approved forget, want 0", n)
	}
	if n := count(t, db, "approvals", "status = ? AND claimed_by = ?", "approved", "resumer"); n != 1 {
		t.Errorf("%d requests approved and continued once, by the replica that took the press, want 1", n)
	}
	if t.Failed() {
		for i, p := range replicas {
			t.Logf("replica %d log:\n%s", i, p.logs.String())
		}
	}
}
