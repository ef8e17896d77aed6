package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// runUntil runs `kairos run` in process until the returned stop is called
// (or the test ends): a restart is a stop and a new run on the same data.
func (e *env) runUntil() (addr string, stop func()) {
	e.t.Helper()
	m := e.main()
	started := make(chan string, 1)
	m.Started = func(a string) { started <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- m.Main(ctx, []string{"run"}) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case <-done:
		case <-testCtx(e.t).Done():
			e.t.Error("kairos run did not stop")
		}
	}
	e.t.Cleanup(stop)
	select {
	case a := <-started:
		return a, stop
	case code := <-done:
		e.t.Fatalf("kairos run exited early with %d:\n%s", code, e.logs.String())
	case <-testCtx(e.t).Done():
		e.t.Fatalf("kairos run did not start:\n%s", e.logs.String())
	}
	return "", stop
}

// approvalsAsked counts the approval keyboards a chat was sent.
func approvalsAsked(tg *testkit.FakeTelegram, chat int64) int {
	return countContaining(textsTo(tg, chat), "Approval needed")
}

// forgetOnce stores a memory and asks to forget it; it returns the text
// of the forget's answer (n is the number of messages the chat has then).
func forgetOnce(t *testing.T, tg *testkit.FakeTelegram, n int) string {
	t.Helper()
	tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
	waitReply(t, tg, approvalChat, n+1, "Done")
	tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	return waitReply(t, tg, approvalChat, n+2, "Forget outcome")
}

// TestAlwaysHereRememberedAfterRestart: "Always here" on a forget is a
// grant in the database; after a restart the same forget in the same
// chat runs without asking, and the journal says a grant covered it. The
// request said in one sentence what it would do, and once decided who
// decided it and how.
func TestAlwaysHereRememberedAfterRestart(t *testing.T) {
	parallel(t)
	rig := newApprovalRig(t, "")
	e := &env{t: t, tg: rig.tg, llm: rig.llm, vars: rig.vars, logs: &syncBuffer{}, out: &syncBuffer{}}
	_, stop := e.runUntil()
	var db *store.DB
	kb, _ := rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })
	text := kb.LastText()
	if lines := strings.Split(text, "\n"); len(lines) < 2 || lines[1] != "Forget the memory ‘Lives in Lisbon’ (saved today)?" {
		t.Errorf("the request does not lead with what it would do, in words: %q", text)
	}
	if !strings.Contains(text, "cover forgetting any of your memories, in this chat") || !strings.Contains(text, "Answer by ") {
		t.Errorf("the request does not say what a grant covers or until when: %q", text)
	}
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Always here"); err != nil {
		t.Fatal(err)
	}
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")
	waitFor(t, "the keyboard to say who decided", func() bool {
		k := rig.tg.SentTo(approvalChat)[1]
		return len(k.Buttons()) == 0 && strings.Contains(k.LastText(), "Approved by User2002 at ") &&
			strings.Contains(k.LastText(), "always allowed here")
	})
	if n := count(t, db, "grants", "tool = ? AND target = ? AND expires_at = 0", "memory", "memories"); n != 1 {
		t.Fatalf("%d grants after Always here, want 1", n)
	}
	stop()

	e.runUntil()
	answer := forgetOnce(t, rig.tg, 3)
	if !strings.Contains(answer, "success") || strings.Contains(answer, "did not approve") {
		t.Errorf("the forget after the restart: %q", answer)
	}
	if n := approvalsAsked(rig.tg, approvalChat); n != 1 {
		t.Errorf("asked %d times, want once (before the restart): %q", n, textsTo(rig.tg, approvalChat))
	}
	if n := count(t, db, "tool_calls", "approval = ?", "granted"); n != 1 {
		t.Errorf("%d tool calls journaled as granted, want 1", n)
	}
	if n := count(t, db, "grants", "uses = 1"); n != 1 {
		t.Errorf("the grant's use was not counted")
	}
}

// TestGrantRevokeTakesEffectOnNextCall: a revoke through /grants' button,
// and one through DELETE /api/v1/grants/{id}, each make the very next
// forget ask again; a read token may list but not revoke.
func TestGrantRevokeTakesEffectOnNextCall(t *testing.T) {
	parallel(t)
	rig := newApprovalRig(t, "")
	e := &env{t: t, tg: rig.tg, llm: rig.llm, vars: rig.vars, logs: &syncBuffer{}, out: &syncBuffer{}}
	read, write := e.apiToken(t, "read", "ro"), e.apiToken(t, "write", "rw")
	addr, _ := e.runUntil()
	base := "http://" + addr
	rig.pauseForApproval(t, func() *store.DB { return rig.db(t) })
	rig.tg.PressButton(approvalChat, approvalChat, "Always here")
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")

	rig.tg.PushText(approvalChat, approvalChat, "/grants", time.Now())
	list := waitReply(t, rig.tg, approvalChat, 4, "Your standing approvals")
	if !strings.Contains(list, "forgetting any of your memories") || !strings.Contains(list, "until revoked") {
		t.Errorf("/grants: %q", list)
	}
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Revoke 1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the revoke's answer", func() bool { return countContaining(callbackTexts(rig.tg), "Revoked") == 1 })
	rig.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
	waitReply(t, rig.tg, approvalChat, 5, "Done")
	rig.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	waitReply(t, rig.tg, approvalChat, 6, "Approval needed")
	if n := approvalsAsked(rig.tg, approvalChat); n != 2 {
		t.Fatalf("after the revoke the forget asked %d times in all, want 2: %q", n, textsTo(rig.tg, approvalChat))
	}
	rig.tg.PressButton(approvalChat, approvalChat, "Always here")
	waitReply(t, rig.tg, approvalChat, 7, "Forget outcome")

	code, body := apiCall(t, "GET", base+"/api/v1/grants?user=telegram:2002", read, "", nil)
	items, _ := body["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("GET /api/v1/grants: %d %v", code, body)
	}
	id := items[0].(map[string]any)["id"].(string)
	if code, _ := apiCall(t, "DELETE", base+"/api/v1/grants/"+id, read, "", nil); code != 403 {
		t.Errorf("a read token revoked a grant: %d", code)
	}
	if code, _ := apiCall(t, "DELETE", base+"/api/v1/grants/"+id, write, "", nil); code != 200 {
		t.Fatalf("DELETE: %d", code)
	}
	if code, _ := apiCall(t, "DELETE", base+"/api/v1/grants/"+id, write, "", nil); code != 404 {
		t.Errorf("a second DELETE: %d, want 404", code)
	}
	rig.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	waitReply(t, rig.tg, approvalChat, 8, "Approval needed")
}

// TestChatAnsweredWhileApprovalWaits: while a forget waits for its
// button, a command and another message are answered; a reply to the
// request waits with one line and runs after the decision; a request left
// alone closes at its expiry, saying when, in the user's zone.
func TestChatAnsweredWhileApprovalWaits(t *testing.T) {
	parallel(t)
	rig := newApprovalRig(t, "approvals:\n  timeout: PT20S\n")
	e := &env{t: t, tg: rig.tg, llm: rig.llm, vars: rig.vars, logs: &syncBuffer{}, out: &syncBuffer{}}
	e.runUntil()
	var db *store.DB
	kb, _ := rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })

	rig.tg.PushText(approvalChat, approvalChat, "/memory", time.Now())
	waitReply(t, rig.tg, approvalChat, 3, "What I remember")
	rig.tg.PushText(approvalChat, approvalChat, "how are you?", time.Now())
	waitReply(t, rig.tg, approvalChat, 4, "Done: how are you?")
	rig.tg.PushText(approvalChat, approvalChat, "what did you do?", time.Now(), testkit.ReplyTo(kb.MessageID))
	waitReply(t, rig.tg, approvalChat, 5, "Waiting for your answer above")
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Approve"); err != nil {
		t.Fatal(err)
	}
	waitReply(t, rig.tg, approvalChat, 6, "Forget outcome")
	waitReply(t, rig.tg, approvalChat, 7, "Done: what did you do?")
	if n := countContaining(textsTo(rig.tg, approvalChat), "Waiting for your answer above"); n != 1 {
		t.Errorf("the waiting line was sent %d times", n)
	}

	// Left alone, a request expires at the clock time it showed, in the
	// user's zone, and the keyboard says so.
	rig.tg.PushText(approvalChat, approvalChat, "/clock tz Asia/Tokyo", time.Now())
	waitReply(t, rig.tg, approvalChat, 8, "Asia/Tokyo")
	forgetAgain := len(rig.tg.SentTo(approvalChat))
	rig.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
	waitReply(t, rig.tg, approvalChat, forgetAgain+1, "Done")
	rig.tg.PushText(approvalChat, approvalChat, "forget where I live", time.Now())
	req := waitReply(t, rig.tg, approvalChat, forgetAgain+2, "Approval needed")
	var exp int64
	waitFor(t, "the request's row", func() bool {
		return db.Gorm().Table("approvals").Where("status = ?", "pending").Select("expires_at").Scan(&exp).Error == nil && exp != 0
	})
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	at := time.UnixMilli(exp).In(tokyo).Format("15:04") + " (Asia/Tokyo)"
	if !strings.Contains(req, "Answer by "+at) {
		t.Errorf("the request does not show its expiry %s: %q", at, req)
	}
	if got := waitReply(t, rig.tg, approvalChat, forgetAgain+3, "Forget outcome"); !strings.Contains(got, "expired") {
		t.Errorf("the turn's answer after the expiry: %q", got)
	}
	if k := rig.tg.SentTo(approvalChat)[forgetAgain+1]; len(k.Buttons()) != 0 || !strings.Contains(k.LastText(), "Expired at "+at) {
		t.Errorf("the expired keyboard: buttons %q, text %q", k.Buttons(), k.LastText())
	}
}

// TestConsoleGrantsPage: the console lists the grants and revokes one
// with its CSRF token (a forged post is refused and changes nothing).
func TestConsoleGrantsPage(t *testing.T) {
	parallel(t)
	rig := newApprovalRig(t, "")
	e := &env{t: t, tg: rig.tg, llm: rig.llm, vars: rig.vars, logs: &syncBuffer{}, out: &syncBuffer{}}
	addr, _ := e.runUntil()
	base := "http://" + addr
	var db *store.DB
	rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })
	rig.tg.PressButton(approvalChat, approvalChat, "Allow 1h")
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")
	c, resp := signIn(t, consoleLink(t, e, 1))
	resp.Body.Close()
	code, page := get(t, c, base+"/console/grants")
	if code != 200 || !strings.Contains(page, "forgetting any of your memories") || !strings.Contains(page, "2002") {
		t.Fatalf("grants page (%d):\n%s", code, page)
	}
	id := regexpFind(t, `name="id" value="([^"]+)"`, page)
	forged, _ := c.PostForm(base+"/console/grants/revoke", map[string][]string{"id": {id}})
	forged.Body.Close()
	if forged.StatusCode != 403 || count(t, db, "grants", "") != 1 {
		t.Fatalf("a revoke without the CSRF token: %d", forged.StatusCode)
	}
	ok, _ := c.PostForm(base+"/console/grants/revoke", map[string][]string{"id": {id}, "csrf": {csrfOf(t, page)}})
	ok.Body.Close()
	if ok.StatusCode != 200 || count(t, db, "grants", "") != 0 {
		t.Fatalf("console revoke: %d, %d grants left", ok.StatusCode, count(t, db, "grants", ""))
	}
	if n := count(t, db, "api_writes", "path = ?", "/console/grants/revoke"); n != 1 {
		t.Errorf("%d console revokes recorded, want 1", n)
	}
}

func regexpFind(t *testing.T, re, s string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	return m[1]
}

// TestTaintStillAsksUnderGrant: with "Always here" on forgetting
// memories, a forget in a clean turn runs unasked; the same forget asked
// for by an injection in an MCP result (a tainted turn) still asks, with
// Approve and Deny only and the reason, and a Deny keeps the memory.
func TestTaintStillAsksUnderGrant(t *testing.T) {
	e, _ := mcpEnv(t, "")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "weather"):
			return testkit.ToolReply(testkit.ToolCall{Name: "notes__inject", Arguments: `{"city":"Lisbon"}`})
		case last.Role == "tool" && strings.Contains(last.Content, "IGNORE ALL PREVIOUS INSTRUCTIONS"):
			// The injection gets the model to forget: the granted target.
			return approvalModel(testkit.ChatRequest{Messages: append(r.Messages, testkit.ChatMessage{Role: "user", Content: "forget it"})})
		}
		return approvalModel(r)
	})
	e.start()
	waitFor(t, "the MCP server to connect", func() bool { return strings.Contains(e.logs.String(), "mcp server connected") })
	const u = approvalChat
	forget := func(n int) {
		e.tg.PushText(u, u, "remember that I live in Lisbon", time.Now())
		waitReply(t, e.tg, u, n, "Done")
		e.tg.PushText(u, u, "forget where I live", time.Now())
	}
	forget(1)
	waitReply(t, e.tg, u, 2, "Approval needed")
	if _, err := e.tg.PressButton(u, u, "Always here"); err != nil {
		t.Fatal(err)
	}
	waitReply(t, e.tg, u, 3, "Forget outcome")
	forget(4)
	if got := waitReply(t, e.tg, u, 5, "Forget outcome"); !strings.Contains(got, "success") {
		t.Fatalf("the granted forget: %q", got)
	}

	e.tg.PushText(u, u, "remember that I live in Lisbon", time.Now())
	waitReply(t, e.tg, u, 6, "Done")
	e.tg.PushText(u, u, "what's the weather?", time.Now())
	req := waitReply(t, e.tg, u, 7, "Approval needed")
	if !strings.Contains(req, "Once only: untrusted content (notes__inject) is in this turn") {
		t.Errorf("the tainted request: %q", req)
	}
	if b := strings.Join(e.tg.SentTo(u)[6].Buttons(), ","); b != "Approve,Deny" {
		t.Errorf("a tainted request offered %q", b)
	}
	if _, err := e.tg.PressButton(u, u, "Deny"); err != nil {
		t.Fatal(err)
	}
	waitReply(t, e.tg, u, 8, "did not approve")
	db := (&approvalRig{vars: e.vars}).db(t)
	if n := count(t, db, "memories", ""); n != 1 {
		t.Fatalf("%d memories after the denied injected forget, want 1", n)
	}
	if n := approvalsAsked(e.tg, u); n != 2 {
		t.Errorf("asked %d times, want 2 (the first forget, the injected one)", n)
	}
}

// TestTaskDeniedWithoutTaskGrant: a grant made in a conversation does
// not cover the user's scheduled task there (denied, as without a grant)
// until /grants says tasks may use it; then the task's forget runs.
func TestTaskDeniedWithoutTaskGrant(t *testing.T) {
	parallel(t)
	rig := newApprovalRig(t, "")
	e := &env{t: t, tg: rig.tg, llm: rig.llm, vars: rig.vars, logs: &syncBuffer{}, out: &syncBuffer{}}
	e.runUntil()
	var db *store.DB
	rig.pauseForApproval(t, func() *store.DB { db = rig.db(t); return db })
	rig.tg.PressButton(approvalChat, approvalChat, "Always here")
	waitReply(t, rig.tg, approvalChat, 3, "Forget outcome")

	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, approvalChat, approvalChat, 0)
	task := func(n int) {
		rig.tg.PushText(approvalChat, approvalChat, "remember that I live in Lisbon", time.Now())
		waitReply(t, rig.tg, approvalChat, n, "Done")
		at := time.Now().Add(time.Second)
		e.seedSchedules(t, &kairos.Schedule{UserID: approvalChat, ChatID: approvalChat, ThreadKey: thread, Kind: kairos.ScheduleTask,
			TZ: "UTC", NextRun: at, Start: at.UTC().Format("2006-01-02T15:04:05"), Task: "forget where I live"})
	}
	task(4)
	denied := waitReply(t, rig.tg, approvalChat, 5, "Scheduled task")
	if !strings.Contains(denied, "did not approve") {
		t.Fatalf("a task used a grant that does not cover tasks: %q", denied)
	}
	if n := count(t, db, "memories", ""); n != 1 {
		t.Fatalf("%d memories after the denied task, want 1", n)
	}
	rig.tg.PushText(approvalChat, approvalChat, "/grants", time.Now())
	waitReply(t, rig.tg, approvalChat, 6, "not for scheduled tasks")
	if _, err := rig.tg.PressButton(approvalChat, approvalChat, "Tasks may use 1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tasks answer", func() bool {
		return countContaining(callbackTexts(rig.tg), "Scheduled tasks in that chat may now use") == 1
	})
	task(7)
	ran := waitReply(t, rig.tg, approvalChat, 8, "Scheduled task")
	if strings.Contains(ran, "did not approve") || !strings.Contains(ran, "success") {
		t.Fatalf("the task with a task grant: %q", ran)
	}
	if n := count(t, db, "memories", ""); n != 0 {
		t.Fatalf("%d memories after the granted task, want 0", n)
	}
	if n := approvalsAsked(rig.tg, approvalChat); n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
}

// TestAlwaysHereOnTheOtherReplica: two `kairos run` replicas on one
// PostgreSQL database behind a round-robin webhook balancer; "Always
// here" pressed through one covers the forgets that reach either.
func TestAlwaysHereOnTheOtherReplica(t *testing.T) {
	parallel(t)
	rig, rr, replicas, db := pressedOnReplicas(t, "Always here")
	waitFor(t, "the grant", func() bool { return count(t, db, "grants", "") == 1 })
	rr.mu.Lock()
	first := len(rr.order)
	rr.mu.Unlock()
	// Two forgets in a row: consecutive updates reach the two replicas.
	for i, n := range []int{4, 5} {
		rig.tg.PushText(approvalChat, approvalChat, fmt.Sprintf("forget where I live (%d)", i), time.Now())
		waitReply(t, rig.tg, approvalChat, n, "Forget outcome")
	}
	for _, p := range replicas {
		p.stop(t, syscall.SIGTERM)
	}
	rr.mu.Lock()
	after := append([]string(nil), rr.order[first:]...)
	rr.mu.Unlock()
	if len(after) != 2 || after[0] == after[1] {
		t.Fatalf("the two forgets did not reach both replicas: %q", after)
	}
	if n := approvalsAsked(rig.tg, approvalChat); n != 1 {
		t.Errorf("asked %d times, want once: %q", n, textsTo(rig.tg, approvalChat))
	}
	if n := count(t, db, "grants", "uses = 2"); n != 1 {
		t.Errorf("the grant was not used by both forgets")
	}
	if t.Failed() {
		for i, p := range replicas {
			t.Logf("replica %d log:\n%s", i, p.logs.String())
		}
	}
}

// TestTerminalAlwaysAndGrants: kairos chat offers the same choices as the
// keyboard ([a]lways here), remembers the grant, lists it in /grants and
// revokes it with /grants revoke ID; the next forget asks again.
func TestTerminalAlwaysAndGrants(t *testing.T) {
	e := chatEnv(t)
	e.llm.SetHandler(approvalModel)
	pr, pw := io.Pipe()
	m := e.main()
	m.Stdin = pr
	done := make(chan int, 1)
	go func() { done <- m.Main(context.Background(), []string{"chat"}) }()
	say := func(line string) { io.WriteString(pw, line+"\n") }
	say("remember that I live in Lisbon")
	waitOut(t, e.out, "Done: stored")
	say("forget where I live")
	waitOut(t, e.out, "Approve? [y]es once / [h]our / [a]lways / [N]o")
	if !strings.Contains(e.out.String(), "Forget the memory ‘Lives in Lisbon’ (saved today)?") {
		t.Fatalf("the terminal's request:\n%s", e.out.String())
	}
	say("a")
	waitOut(t, e.out, "Forget outcome")
	say("remember that I live in Lisbon")
	say("forget where I live")
	waitFor(t, "the second forget's answer", func() bool { return strings.Count(e.out.String(), "Forget outcome") == 2 })
	if n := strings.Count(e.out.String(), "Approval needed"); n != 1 {
		t.Fatalf("asked %d times:\n%s", n, e.out.String())
	}
	say("/grants")
	waitOut(t, e.out, "Standing approvals")
	id := regexpFind(t, `; id ([0-9a-f-]{36})`, e.out.String())
	say("/grants revoke " + id)
	waitOut(t, e.out, "Revoked: forgetting any of your memories")
	say("remember that I live in Lisbon")
	say("forget where I live")
	waitFor(t, "the third request", func() bool { return strings.Count(e.out.String(), "Approval needed") == 2 })
	say("n")
	pw.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
}
