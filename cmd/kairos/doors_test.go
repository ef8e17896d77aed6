package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// The doors tests: whatever door a message comes in by, the desk decides
// the same way who may do what (issue [doors]).

// writePolicy replaces the test policy with the access block plus extra.
func (e *env) writePolicy(t *testing.T, extra string) {
	t.Helper()
	text := fmt.Sprintf("access:\n  operators: [%d]\n  allowed_users: [2002]\n  pairing: true\n%s", operatorID, extra)
	if err := os.WriteFile(e.vars["KAIROS_POLICY"], []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// forwardedCases are the own-words-only inputs: every command of the table
// (a sample of arguments) and every kind of clock directive.
var forwardedCases = []string{
	"/pair %s", "/usage lift 2002", "/usage lift bot", "/mode execute", "/newsession", "/console", "/policy",
	"/clock tz Pacific/Kiritimati", "/memory", "/reminders", "/tools", "/help", "/codestats", "/skills",
	"clock: tz Pacific/Kiritimati", "clock: kind project", "clock: mode off", "clock it: leaving for the airport",
	"Clock It: call mum", "clock: done",
}

// TestForwardedCommandsAndDirectivesAreContent: a forwarded message or a
// channel's post that reads like a command or a clock directive is never
// run as the forwarder's own: a stranger's pairing code forwarded by the
// operator admits nobody, a forwarded zone change leaves the zone alone,
// and each gets one line saying it was not run, with no model call.
func TestForwardedCommandsAndDirectivesAreContent(t *testing.T) {
	e := newEnv(t)
	e.writePolicy(t, "")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("model answered") })
	e.start()
	const stranger = 5555
	e.tg.PushText(stranger, stranger, "let me in", time.Now())
	refusal := e.tg.MustWaitSentTo(stranger, 1)[0].LastText()
	code := refusal[strings.LastIndex(refusal, " ")+1:]
	for i, c := range forwardedCases {
		text := strings.ReplaceAll(c, "%s", code)
		opt := testkit.Forwarded("Someone")
		chat := int64(operatorID)
		if i%3 == 2 { // a channel's post in its discussion group
			opt, chat = testkit.AutomaticForward(), -100777
			text += " @" + e.tg.BotUsername()
		}
		e.tg.PushText(chat, operatorID, text, time.Now(), opt)
		got := waitNth(t, e.tg, chat, len(e.tg.SentTo(chat))+1)
		if !strings.Contains(got, "did not run it") {
			t.Fatalf("forwarded %q: reply %q, want the not-run note", text, got)
		}
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("forwarded commands reached the model %d times", n)
	}
	e.tg.PushText(operatorID, operatorID, "/clock", time.Now())
	if got := waitNth(t, e.tg, operatorID, len(e.tg.SentTo(operatorID))+1); strings.Contains(got, "Kiritimati") {
		t.Fatalf("a forwarded directive set the zone: %q", got)
	}
	e.tg.PushText(stranger, stranger, "am I in now?", time.Now())
	if got := waitNth(t, e.tg, stranger, 2); strings.Contains(got, "model answered") {
		t.Fatalf("a forwarded /pair admitted the stranger: %q", got)
	}
}

// waitNth waits for the chat's n-th message and returns its text.
func waitNth(t *testing.T, tg *testkit.FakeTelegram, chat int64, n int) string {
	t.Helper()
	return tg.MustWaitSentTo(chat, n)[n-1].LastText()
}

// TestPrivateOnlyCommandsInAGroup: what shows a sign-in link, the policy
// or other people's spending answers only in a private chat; in a group
// the operator is told to ask in private, and nothing leaks.
func TestPrivateOnlyCommandsInAGroup(t *testing.T) {
	e := newEnv(t)
	e.start()
	const group = -100900
	for _, c := range []string{"/console", "/policy", "/usage lift 2002"} {
		e.tg.PushText(group, operatorID, c, time.Now(), testkit.AsGroup("friends"))
		got := waitNth(t, e.tg, group, len(e.tg.SentTo(group))+1)
		if !strings.Contains(got, "private chat") || strings.Contains(got, "http") || strings.Contains(got, "access") {
			t.Fatalf("%s in a group: %q", c, got)
		}
	}
	e.tg.PushText(group, operatorID, "/usage", time.Now(), testkit.AsGroup("friends"))
	if got := waitSent(t, e.tg, group, "usage"); got != 1 {
		t.Fatalf("/usage answered %d times", got)
	}
	for _, s := range e.tg.SentTo(group) {
		if strings.Contains(s.LastText(), "Everyone (the bot") || strings.Contains(s.LastText(), "2002") {
			t.Fatalf("an operator's /usage in a group shows others' spending: %q", s.LastText())
		}
	}
	e.tg.PushText(operatorID, operatorID, "/console", time.Now())
	if got := waitNth(t, e.tg, operatorID, 1); !strings.Contains(got, "/console/") {
		t.Fatalf("/console in private: %q", got)
	}
	menu := fmt.Sprint(e.tg.Commands())
	if strings.Contains(menu, "console") || strings.Contains(menu, "policy") || !strings.Contains(menu, "usage") {
		t.Fatalf("command menu %s", menu)
	}
}

// TestTaskWithoutToolsIsOfferedNone: with schedules.tasks_may_use_tools
// false a scheduled task's turn is offered no tool at all (skills and MCP
// included), and its prompt names none.
func TestTaskWithoutToolsIsOfferedNone(t *testing.T) {
	e := newEnv(t)
	e.writePolicy(t, "features:\n  self_update: true\nschedules:\n  tasks_may_use_tools: false\n")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("task answered") })
	const user = 2002
	e.seedSchedules(t, dueSchedule(user, kairos.ScheduleTask, "plan my day", time.Now().Add(-time.Minute)))
	e.start()
	waitSent(t, e.tg, user, "task answered")
	req := e.llm.LastRequest()
	if n := len(req.Tools); n != 0 {
		t.Fatalf("the task was offered %d tools: %v", n, req.ToolNames())
	}
	if sys := req.SystemPrompt(); strings.Contains(sys, "Tools:") || strings.Contains(sys, "Code cells") {
		t.Fatalf("the task's prompt names tools:\n%s", sys)
	}
}

// TestNoSecretsWordWithCredentialsOff: with features.credentials_access
// false (the default) cells have no secrets, and what the model is given
// (the prompt and the code tool's description) says nothing of getSecret
// or the secrets' names.
func TestNoSecretsWordWithCredentialsOff(t *testing.T) {
	parallel(t)
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("credentials_access=", on), func(t *testing.T) {
			e := newEnv(t)
			e.writePolicy(t, fmt.Sprintf("features:\n  credentials_access: %v\n", on))
			e.vars["KAIROS_SECRET_HOME_TOKEN"] = "s3cr3t-value"
			e.llm.Enqueue(testkit.TextReply("hi"))
			e.start()
			e.tg.PushText(operatorID, operatorID, "hello, run some code", time.Now())
			waitReply(t, e.tg, operatorID, 1, "hi")
			req := e.llm.LastRequest()
			sys := req.SystemPrompt()
			for _, td := range req.Tools {
				sys += "\n" + td.Description
			}
			mentions := strings.Contains(sys, "getSecret") || strings.Contains(sys, "HOME_TOKEN") || strings.Contains(sys, "listSecrets")
			if mentions != on {
				t.Fatalf("credentials_access %v: prompt mentions secrets: %v\n%s", on, mentions, sys)
			}
		})
	}
}

// TestTerminalServesTheWholeTable: kairos chat answers every command of
// the desk's table (none is unknown there), /help lists them, and
// /console says how to get a sign-in link instead of "not serving yet".
func TestTerminalServesTheWholeTable(t *testing.T) {
	e := chatEnv(t)
	e.writePolicy(t, "features:\n  self_update: true\n")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("ok") })
	m := e.main()
	names := []string{"newsession", "codestats", "codefailures", "clock", "mode", "memory", "policy", "tools", "console",
		"usage", "reminders", "skills", "grants"}
	var in strings.Builder
	in.WriteString("/help\n")
	for _, n := range names {
		in.WriteString("/" + n + "\n")
	}
	m.Stdin = strings.NewReader(in.String())
	if code := m.Main(context.Background(), []string{"chat"}); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	out := e.out.String()
	if strings.Contains(out, "don't know the command") || strings.Contains(out, "not serving yet") {
		t.Fatalf("the terminal lacks a command of the table:\n%s", out)
	}
	for _, n := range names {
		if !strings.Contains(out, "/"+n+":") {
			t.Fatalf("/help in the terminal does not list /%s:\n%s", n, out)
		}
	}
	if !strings.Contains(out, "kairos run") {
		t.Fatalf("/console in the terminal does not say how to get a link:\n%s", out)
	}
}

// TestTerminalFiringsMatchTelegram: a scheduled task and a watching cell
// set up after untrusted content say so in kairos chat as on Telegram (one
// composition at the desk), and the task's spend counts as background.
func TestTerminalFiringsMatchTelegram(t *testing.T) {
	e := chatEnv(t)
	e.writePolicy(t, "features:\n  network: false\n")
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply { return testkit.TextReply("task answer") })
	uid := cliUserID()
	thread := kairos.ThreadKey(kairos.ChannelCLI, kairos.ChatDM, uid, uid, 0)
	task := dueSchedule(uid, kairos.ScheduleTask, "summarise", time.Now().Add(-time.Minute))
	cell := dueSchedule(uid, kairos.ScheduleCell, "watch the price", time.Now().Add(-time.Minute))
	cell.Code = `output({notify: "price dropped"})`
	for _, s := range []*kairos.Schedule{task, cell} {
		s.ChatID, s.ThreadKey, s.Tainted = uid, thread, true
	}
	e.seedSchedules(t, task, cell)
	pr, pw := pipeInput(t)
	m := e.main()
	m.Stdin = pr
	done := make(chan int, 1)
	go func() { done <- m.Main(context.Background(), []string{"chat"}) }()
	waitOut(t, e.out, desk.TaintedTaskWarning[:40])
	waitOut(t, e.out, "price dropped")
	pw.Close()
	if code := waitExit(t, done); code != 0 {
		t.Fatalf("exit %d: %s", code, e.logs.String())
	}
	out := e.out.String()
	if !strings.Contains(out, desk.TaintedCellWarning[:30]) {
		t.Fatalf("the tainted cell's note has no warning in the terminal:\n%s", out)
	}
	if sys := e.llm.LastRequest().LastUserMessage(); !strings.Contains(sys, "untrusted_message") {
		t.Fatalf("the tainted task's prompt was not fenced as untrusted: %q", sys)
	}
	checkBackgroundSpend(t, e, kairos.UserKey(kairos.ChannelCLI, uid))
}

// pipeInput is a terminal's stdin the test writes to.
func pipeInput(t *testing.T) (*io.PipeReader, *io.PipeWriter) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	return pr, pw
}

// checkBackgroundSpend: every model call made for user was a task's
// (recorded as background spend), and there was one.
func checkBackgroundSpend(t *testing.T, e *env, user string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ph := "?"
	if db.Dialect() != store.DialectSQLite {
		ph = "$1"
	}
	rows, err := db.SQL().QueryContext(ctx, "SELECT kind FROM token_usage WHERE user_key = "+ph, user)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kinds []string
	for rows.Next() {
		var k string
		rows.Scan(&k)
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		t.Fatalf("no spend recorded for %s", user)
	}
	for _, k := range kinds {
		if k != kairos.SpendTask {
			t.Fatalf("a task's spend was recorded as %q, not background (%q): %v", k, kairos.SpendTask, kinds)
		}
	}
}

// TestAPIModelOutageIs503: a turn the model could not answer is, through
// the API, a 503 with the code "unavailable" (the chat still gets the
// apology), and it is not logged as a fault of ours.
func TestAPIModelOutageIs503(t *testing.T) {
	e := newEnv(t)
	e.vars["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1" // nothing listens
	write := e.apiToken(t, "write", "script")
	addr := e.start()
	code, body := apiCall(t, "POST", "http://"+addr+"/api/v1/messages", write, "application/json",
		[]byte(`{"user_id": 2002, "text": "hello?"}`))
	errBody, _ := body["error"].(map[string]any)
	if code != 503 || errBody["code"] != kairos.EUNAVAILABLE {
		t.Fatalf("an outage through the API: %d %v", code, body)
	}
	waitReply(t, e.tg, 2002, 1, "Sorry")
	if logs := e.logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Fatalf("an outage was logged as a fault:\n%s", logs)
	}
}

// TestBuiltinToolsAreTheRegistrys: the names agent.disabled_tools may
// take (kairos.BuiltinTools, which the policy validates against) are
// exactly the tools the registry offers of its own, so a new built-in
// tool can be disabled (before: "skill" and "research" were refused as
// unknown) and no name is accepted that disables nothing.
func TestBuiltinToolsAreTheRegistrys(t *testing.T) {
	e := chatEnv(t)
	e.writePolicy(t, "features:\n  self_update: true\n  cli_exec: true\n")
	c := e.openCore(t)
	var got []string
	for _, tl := range c.registry.Tools(c.policy()) {
		if _, mcp := tl.(kairos.ExternalTool); !mcp && !strings.HasPrefix(tl.Spec().Name, kairos.SkillToolPrefix) {
			got = append(got, tl.Spec().Name)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(kairos.BuiltinTools))
	if !slices.Equal(got, want) {
		t.Fatalf("the registry's own tools %v, kairos.BuiltinTools %v", got, want)
	}
	for _, name := range kairos.BuiltinTools {
		p := *c.policy()
		p.Agent.DisabledTools = []string{name}
		for _, tl := range c.registry.Tools(&p) {
			if tl.Spec().Name == name {
				t.Errorf("agent.disabled_tools [%s] left %s offered", name, name)
			}
		}
	}
}
