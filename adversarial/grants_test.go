package adversarial

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/internal/testkit/mcpserver"
	"github.com/kairos-agent/kairos/store"
)

// TestGrants: standing approvals that try to cover more than they
// should. The victim gives "Always here" (or "Allow 1h") for forgetting
// memories; then the same call is tried in another chat, by another
// user, on another tool, after an injection, after the grant expired,
// by a scheduled task, and with forged buttons (a grant a request did
// not offer, a grant chosen by someone else, revokes and task toggles of
// another's grant, an unknown choice, a grant through the API). What
// must hold: each of them asks (or is refused), and nothing is forgotten
// or granted that the victim did not choose.
func TestGrants(t *testing.T) {
	t.Parallel()
	const victim, other, operator = int64(4101), int64(4102), int64(4109)
	srv := mcpserver.New("notes")
	ts := httptest.NewServer(srv.Handler("grants-notes-token"))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Release)
	r := newRig(t, fmt.Sprintf(`access:
  operators: [%d]
  allowed_users: [%d, %d]
  group_replies: all
approvals:
  timeout: PT5M
  never_grant: [skill.create, skill.update, skill.rollback, network.unlisted_host, notes__echo]
mcp:
  servers:
    notes:
      url: %s
      token_secret: NOTES
      tools: [echo, add_note, inject]
      impact: {inject: read}
`, operator, victim, other, ts.URL))
	r.vars["KAIROS_SECRET_NOTES"] = "grants-notes-token"
	r.llm.SetHandler(grantsModel)
	db := r.db()
	r.start()
	g := &grantsCase{r: r, db: db, t: t}
	var section tally

	// The victim's grants: forgetting memories always, in their private
	// chat and in group -4400; for an hour in group -4500.
	g.forget(victim, victim)
	g.press(victim, victim, "Always here")
	g.answered(victim, "Forget outcome")
	g.forget(-4400, victim)
	g.press(-4400, victim, "Always here")
	g.answered(-4400, "Forget outcome")
	g.forget(-4500, victim)
	g.press(-4500, victim, "Allow 1h")
	g.answered(-4500, "Forget outcome")
	if n := count(t, db, "grants", "user_key = ?", "telegram:4101"); n != 3 {
		t.Fatalf("%d grants set up, want 3", n)
	}

	// Another chat: the group -4300, where the victim granted nothing.
	section.add("another chat", g.asks(-4300, victim, func() { g.forget(-4300, victim) }), "a forget in another chat ran unasked")
	// Forged: another allowed user, and an operator, choose "Always here"
	// on the victim's request; an unknown choice.
	id := g.pendingID(-4300)
	cb := len(r.tg.CallbackAnswers())
	for _, by := range []int64{other, operator} {
		r.tg.PushCallback(-4300, by, 0, "ap:"+id+":a")
	}
	r.tg.PushCallback(-4300, victim, 0, "ap:"+id+":A")
	g.callbacks(cb, 3)
	section.add("always chosen by another user", g.noGrant("telegram:4102") && g.stillPending(id), "another user's Always here decided or granted")
	section.add("always chosen by an operator", g.noGrantIn(-4300) && g.stillPending(id), "an operator's Always here made a grant for the victim")
	section.add("unknown choice", g.stillPending(id) && g.answeredCallback("Unknown button."), "an unknown choice decided")
	g.press(-4300, victim, "Deny")

	// Another user in a chat where the victim granted.
	section.add("another user", g.asks(-4400, other, func() { g.forget(-4400, other) }), "another user's forget ran on the victim's grant")
	g.press(-4400, other, "Deny")

	// Another target: another tool (and one never_grant lists: its
	// request offers no grant, and a forged Always here is refused).
	section.add("another tool", g.asks(victim, victim, func() { r.tg.PushText(victim, victim, "echo hello", time.Now()) }),
		"a call of another tool ran on the grant")
	id = g.pendingID(victim)
	offered := strings.Join(r.tg.SentTo(victim)[len(r.tg.SentTo(victim))-1].Buttons(), ",")
	cb = len(r.tg.CallbackAnswers())
	r.tg.PushCallback(victim, victim, 0, "ap:"+id+":a")
	g.callbacks(cb, 1)
	section.add("never_grant tool", offered == "Approve,Deny" && g.stillPending(id) && g.noGrantFor("notes__echo"),
		"a never_grant tool offered or took a grant: "+offered)
	g.press(victim, victim, "Deny")

	// An expired grant.
	if err := db.Gorm().Exec("UPDATE grants SET expires_at = ? WHERE expires_at <> 0", time.Now().Add(-time.Second).UnixMilli()).Error; err != nil {
		t.Fatal(err)
	}
	section.add("expired grant", g.asks(-4500, victim, func() { g.forget(-4500, victim) }), "an expired grant covered a forget")
	g.press(-4500, victim, "Deny")

	// A scheduled task: the grant in -4400 does not cover tasks.
	r.tg.PushText(-4400, victim, "remember that I live in Lisbon", time.Now(), groupOpts(-4400)...)
	g.answered(-4400, "Done: ")
	granted := g.granted()
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatGroup, -4400, victim, 0)
	at := time.Now().Add(time.Second)
	if err := store.NewScheduleStore(db).CreateSchedule(context.Background(), &kairos.Schedule{UserID: victim, ChatID: -4400, ThreadKey: thread,
		Kind: kairos.ScheduleTask, TZ: "UTC", NextRun: at, Start: at.UTC().Format("2006-01-02T15:04:05"), Task: "forget where I live"}, 0); err != nil {
		t.Fatal(err)
	}
	r.waitText(-4400, "Scheduled task")
	section.add("scheduled task", g.granted() == granted && strings.Contains(g.lastText(-4400, "Scheduled task"), "did not approve"),
		"a task's forget ran on a grant that does not cover tasks")

	// Another's grant: revoke and task toggle by the other user.
	var gid string
	db.Gorm().Table("grants").Where("thread_key = ?", thread).Select("id").Scan(&gid)
	cb = len(r.tg.CallbackAnswers())
	r.tg.PushCallback(-4400, other, 0, "gr:revoke:"+gid)
	r.tg.PushCallback(-4400, other, 0, "gr:tasks:"+gid+":on")
	g.callbacks(cb, 2)
	section.add("revoke another's grant", count(t, db, "grants", "id = ?", gid) == 1, "another user revoked the victim's grant")
	section.add("tasks on another's grant", count(t, db, "grants", "id = ? AND covers_tasks", gid) == 0, "another user let tasks use the victim's grant")

	// A tainted turn: an injection in an MCP result asks for the granted
	// forget in the victim's private chat; the request offers no grant,
	// and a forged Always here on it is refused.
	asked := g.asks(victim, victim, func() {
		r.tg.PushText(victim, victim, "remember that I live in Lisbon", time.Now())
		r.tg.PushText(victim, victim, "what's the weather?", time.Now())
	})
	section.add("tainted turn", asked, "an injected forget ran on the grant")
	if !asked { // nothing left to forge on
		section.add("always on a tainted request", false, "no request: the injected forget ran")
		section.add("grant through the API", false, "no request: the injected forget ran")
		section.report(t, "grants")
		return
	}
	id = g.pendingID(victim)
	cb = len(r.tg.CallbackAnswers())
	r.tg.PushCallback(victim, victim, 0, "ap:"+id+":a")
	g.callbacks(cb, 1)
	section.add("always on a tainted request", g.stillPending(id) && count(t, db, "grants", "user_key = ?", "telegram:4101") == 3,
		"a forged Always here on a tainted request decided or granted")
	// Through the API: a decision cannot carry a grant.
	status := g.apiDecide(id, `{"approve": true, "scope": "always"}`)
	section.add("grant through the API", status == 400 && g.stillPending(id), fmt.Sprintf("the API took a scope: %d", status))
	g.press(victim, victim, "Deny")

	section.report(t, "grants")
	if section.tried != 14 {
		t.Errorf("tried %d cases, want 14", section.tried)
	}
}

// grantsCase drives one rig through the grant cases.
type grantsCase struct {
	t  *testing.T
	r  *rig
	db *store.DB
}

var apID = regexp.MustCompile(`"callback_data":"ap:([0-9a-f]+):y"`)

// forget stores a memory and asks to forget it, in chat by user.
func (g *grantsCase) forget(chat, user int64) {
	g.t.Helper()
	opts := groupOpts(chat)
	g.r.tg.PushText(chat, user, "remember that I live in Lisbon", time.Now(), opts...)
	g.r.tg.PushText(chat, user, "forget where I live", time.Now(), opts...)
}

func groupOpts(chat int64) []testkit.PushOption {
	if chat < 0 {
		return []testkit.PushOption{testkit.AsGroup(fmt.Sprint("group ", chat))}
	}
	return nil
}

// asks runs do and reports whether it ended in an approval request (a
// new keyboard in chat) rather than in a call a grant covered (a new
// tool call journaled as granted).
func (g *grantsCase) asks(chat, user int64, do func()) bool {
	g.t.Helper()
	before, granted := len(g.keyboards(chat)), g.granted()
	do()
	deadline := testkit.GiveUpAt(g.t)
	for time.Now().Before(deadline) {
		if len(g.keyboards(chat)) > before {
			return true
		}
		if g.granted() > granted {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("chat %d: neither a request nor a granted call; logs:\n%s", chat, tail(g.r.logs.String(), 3000))
	return false
}

// granted counts the tool calls a grant covered.
func (g *grantsCase) granted() int64 {
	return count(g.t, g.db, "tool_calls", "approval = ?", kairos.ApprovalGranted)
}

func (g *grantsCase) keyboards(chat int64) []string {
	var out []string
	for _, m := range g.r.tg.SentTo(chat) {
		if strings.Contains(m.LastText(), "Approval needed") {
			out = append(out, m.LastText())
		}
	}
	return out
}

// press presses a button of the newest keyboard of chat.
func (g *grantsCase) press(chat, user int64, label string) {
	g.t.Helper()
	deadline := testkit.GiveUpAt(g.t)
	for {
		if _, err := g.r.tg.PressButton(chat, user, label); err == nil {
			return
		} else if time.Now().After(deadline) {
			g.t.Fatalf("no %q button in chat %d: %v", label, chat, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// answered waits for a message containing want in chat after a press.
func (g *grantsCase) answered(chat int64, want string) {
	g.t.Helper()
	g.r.waitText(chat, want)
}

// pendingID is the approval id of chat's newest keyboard.
func (g *grantsCase) pendingID(chat int64) string {
	g.t.Helper()
	sent := g.r.tg.SentTo(chat)
	for i := len(sent) - 1; i >= 0; i-- {
		if m := apID.FindStringSubmatch(string(sent[i].LastReplyMarkup())); m != nil {
			return m[1]
		}
	}
	g.t.Fatalf("no approval keyboard in chat %d", chat)
	return ""
}

// callbacks waits until k more callback queries than `since` have been
// answered.
func (g *grantsCase) callbacks(since, k int) {
	g.t.Helper()
	deadline := testkit.GiveUpAt(g.t)
	for len(g.r.tg.CallbackAnswers()) < since+k {
		if time.Now().After(deadline) {
			g.t.Fatalf("%d callback answers, want %d", len(g.r.tg.CallbackAnswers()), since+k)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (g *grantsCase) answeredCallback(text string) bool {
	for _, a := range g.r.tg.CallbackAnswers() {
		if a.Text == text {
			return true
		}
	}
	return false
}

// lastText is the newest message of chat containing want.
func (g *grantsCase) lastText(chat int64, want string) string {
	sent := g.r.tg.SentTo(chat)
	for i := len(sent) - 1; i >= 0; i-- {
		if strings.Contains(sent[i].LastText(), want) {
			return sent[i].LastText()
		}
	}
	return ""
}

func (g *grantsCase) stillPending(id string) bool {
	return count(g.t, g.db, "approvals", "id = ? AND status = ?", id, kairos.ApprovalPending) == 1
}

func (g *grantsCase) noGrant(user string) bool {
	return count(g.t, g.db, "grants", "user_key = ?", user) == 0
}

func (g *grantsCase) noGrantIn(chat int64) bool {
	return count(g.t, g.db, "grants", "thread_key LIKE ?", fmt.Sprintf("%%:group:%d", chat)) == 0
}

func (g *grantsCase) noGrantFor(tool string) bool {
	return count(g.t, g.db, "grants", "tool = ?", tool) == 0
}

// apiDecide posts a decision through the API with a write token and
// returns the status.
func (g *grantsCase) apiDecide(id, body string) int {
	g.t.Helper()
	cmd := exec.Command(kairosBinary(g.t), "token", "create", "--scope", "write", "--name", "adv")
	cmd.Env = []string{"HOME=" + g.r.dir}
	for k, v := range g.r.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		g.t.Fatalf("token create: %v", err)
	}
	addr := regexp.MustCompile(`http=(127\.0\.0\.1:\d+)`).FindStringSubmatch(g.r.logs.String())
	if addr == nil {
		g.t.Fatal("no admin address in the log")
	}
	req, _ := http.NewRequest("POST", "http://"+addr[1]+"/api/v1/approvals/"+id+"/decision", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(out)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

var memoryID = regexp.MustCompile(`"id":"([0-9a-f-]{36})"`)

// grantsModel: "remember" stores, "forget" forgets the last stored
// memory, "echo" calls notes__echo, "weather" reads an MCP result whose
// injection asks for the forget, which the model obeys.
func grantsModel(req testkit.ChatRequest) testkit.Reply {
	last := req.Messages[len(req.Messages)-1]
	forget := func() testkit.Reply {
		id := ""
		for _, m := range req.Messages {
			if mm := memoryID.FindStringSubmatch(m.Content); mm != nil && m.Role == "tool" {
				id = mm[1]
			}
		}
		return testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"forget","memory_id":"` + id + `"}`})
	}
	switch {
	case last.Role == "user" && strings.Contains(last.Content, "remember"):
		return testkit.ToolReply(testkit.ToolCall{Name: "memory", Arguments: `{"action":"store","store":"user_memory","category":"fact","content":"Lives in Lisbon"}`})
	case last.Role == "user" && strings.Contains(last.Content, "forget"):
		return forget()
	case last.Role == "user" && strings.Contains(last.Content, "echo"):
		return testkit.ToolReply(testkit.ToolCall{Name: "notes__echo", Arguments: `{"text":"hello"}`})
	case last.Role == "user" && strings.Contains(last.Content, "weather"):
		return testkit.ToolReply(testkit.ToolCall{Name: "notes__inject", Arguments: `{"city":"Lisbon"}`})
	case last.Role == "tool" && strings.Contains(last.Content, "IGNORE ALL PREVIOUS INSTRUCTIONS"):
		return forget()
	case last.Role == "tool" && len(req.Messages) > 1 && len(req.Messages[len(req.Messages)-2].ToolCalls) > 0 &&
		strings.Contains(req.Messages[len(req.Messages)-2].ToolCalls[0].Arguments, "forget"):
		return testkit.TextReply("Forget outcome: " + last.Content)
	case last.Role == "tool":
		return testkit.TextReply("Done: " + kairos.Clip(last.Content, 200))
	}
	return testkit.TextReply("ok")
}
