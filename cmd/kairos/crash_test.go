package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// kairosBin is this command, built once per test binary.
var kairosBin = &testkit.Binary{Pkg: "."}

// kairosBinary returns the built command's path.
func kairosBinary(t *testing.T) string { return kairosBin.Path(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	kairosBin.Remove()
	if warmedDir != "" {
		os.RemoveAll(warmedDir)
	}
	os.Exit(code)
}

// proc is a `kairos run` subprocess.
type proc struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

func startProc(t *testing.T, bin string, vars map[string]string) *proc {
	t.Helper()
	p := &proc{logs: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "run")
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range vars {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout = p.logs
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends sig and waits for the exit.
func (p *proc) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case err := <-p.done:
		if sig == syscall.SIGTERM && err != nil {
			t.Fatalf("kairos exited after SIGTERM with %v:\n%s", err, p.logs.String())
		}
	case <-testCtx(t).Done():
		t.Fatalf("kairos did not exit after %v:\n%s", sig, p.logs.String())
	}
}

// tally counts, for each pushed text, the bot messages whose final text is
// its complete reply, and the ones left as a streaming placeholder.
type tally struct {
	complete map[string]int
	stale    map[string]int
	other    []string
}

func countReplies(tg *testkit.FakeTelegram, texts []string, reply func(string) string) tally {
	want := map[string]string{}
	for _, s := range texts {
		want[reply(s)] = s
	}
	tl := tally{complete: map[string]int{}, stale: map[string]int{}}
	for _, m := range tg.Sent() {
		txt := strings.TrimSpace(m.LastText())
		if s, ok := want[txt]; ok {
			tl.complete[s]++
			continue
		}
		if s, ok := want[strings.TrimSpace(strings.TrimSuffix(txt, "…"))]; ok {
			tl.stale[s]++
			continue
		}
		tl.other = append(tl.other, txt)
	}
	return tl
}

// TestCrashMidFloodAnswersEachUpdateOnce kills `kairos run` with SIGKILL
// in the middle of a flood and restarts it on the same data directory:
// every update is answered, and none twice.
func TestCrashMidFloodAnswersEachUpdateOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	tests := []struct {
		name  string
		text  func(chat int64, i int) string
		reply func(text string) string
		// knownBug, when set, names a bug that makes the strict bound
		// (at most one reply lost) fail; the case then reports its
		// figures and skips instead of failing. Clear it with the fix.
		knownBug string
	}{
		{
			// The model's answer streams: a placeholder, then the final
			// text edited in. The final has its own outbox part.
			name:  "streamed answers",
			text:  func(chat int64, i int) string { return fmt.Sprintf("flood %d number %02d", chat, i) },
			reply: func(text string) string { return "echo: " + text },
		},
		{
			// A command's answer is one part sent whole.
			name:  "command answers",
			text:  func(chat int64, i int) string { return fmt.Sprintf("/flood%dn%02d", chat, i) },
			reply: func(text string) string { return "I don't know the command " + text + ". Send /help for the list." },
		},
	}
	bin := kairosBinary(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crashFlood(t, bin, tc.text, tc.reply, tc.knownBug)
		})
	}
}

// crashFlood floods chats with updates, kills the first `kairos run` with
// SIGKILL mid-flood, lets a second one on the same data finish, and checks
// that each update was answered once (up to the at-most-once edge).
func crashFlood(t *testing.T, bin string, textOf func(int64, int) string, reply func(string) string, knownBug string) {
	f := newFlood(t, textOf, reply)
	f.killMidFlood(t, bin)

	second := startProc(t, bin, f.vars)
	db, err := store.Open(context.Background(), store.Config{DataDir: f.vars["KAIROS_DATA_DIR"], DatabaseURL: f.vars["KAIROS_DATABASE_URL"], SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	updates := store.NewUpdateLog(db)
	tl := f.drain(t, second, updates)

	pending, err := updates.PendingUpdates(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var unknown []string
	if err := db.Gorm().Table("outbox").Where("status = ?", kairos.OutboxSending).Pluck("key", &unknown).Error; err != nil {
		t.Fatal(err)
	}
	f.judge(t, tl, len(pending), unknown, second, knownBug)
}

// flood is one run of crashFlood: the fakes, the environment of both
// processes and the pushed texts, in push order.
type flood struct {
	tg    *testkit.FakeTelegram
	vars  map[string]string
	texts []string
	reply func(string) string
	t0    time.Time // the first process's start
}

// floodChats chats (ids from 3001) send floodPerChat messages each.
const floodChats, floodPerChat = 20, 10

// newFlood starts the fakes (the model echoes the last user message) and
// queues the whole flood on the fake Bot API before kairos starts.
func newFlood(t *testing.T, textOf func(int64, int) string, reply func(string) string) *flood {
	t.Helper()
	f := &flood{tg: testkit.NewFakeTelegram(t, ""), reply: reply}
	llm := testkit.NewFakeOpenAI(t)
	// The whole echo in one streamed chunk, so that a placeholder left
	// behind by the crash still names its message.
	llm.SetHandler(func(req testkit.ChatRequest) testkit.Reply {
		text := "echo: " + req.LastUserMessage()
		return testkit.Reply{Text: text, Chunks: []string{text}}
	})
	f.vars = floodVars(t, f.tg, llm)

	date := time.Now()
	for i := 0; i < floodPerChat; i++ {
		for c := 0; c < floodChats; c++ {
			chat := int64(3001 + c)
			text := textOf(chat, i)
			f.texts = append(f.texts, text)
			f.tg.PushText(chat, chat, text, date)
		}
	}
	return f
}

// floodVars writes a policy allowing the flood's chats and returns the
// environment of `kairos run` against the fakes (PostgreSQL when
// storetest.EnvURL is set).
func floodVars(t *testing.T, tg *testkit.FakeTelegram, llm *testkit.FakeOpenAI) map[string]string {
	t.Helper()
	dir := t.TempDir()
	var users []string
	for c := 0; c < floodChats; c++ {
		users = append(users, fmt.Sprint(3001+c))
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("access:\n  allowed_users: ["+strings.Join(users, ", ")+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"TELEGRAM_BOT_TOKEN": tg.Token(),
		"TELEGRAM_API_URL":   tg.URL(),
		"OPENAI_BASE_URL":    llm.URL(),
		"OPENAI_API_KEY":     "sk-test-crash",
		"KAIROS_MODEL":       "test-model",
		"KAIROS_DATA_DIR":    filepath.Join(dir, "data"),
		"KAIROS_POLICY":      policy,
		"KAIROS_HTTP_ADDR":   "127.0.0.1:0",
		"KAIROS_SEARCH_URL":  "http://127.0.0.1:1",
		// A worker waits out the chat's send limit while it holds its
		// slot; one per chat keeps the test short.
		"KAIROS_WORKERS": fmt.Sprint(floodChats),
	}
	if u := os.Getenv(storetest.EnvURL); u != "" {
		vars["KAIROS_DATABASE_URL"] = storetest.FreshSchemaURL(t, u)
		// On PostgreSQL each turn holds a pooled connection for the chat's
		// advisory lock; 16 workers or more exhaust the pool of 16 and
		// deadlock (see the issue 8 report), so stay below it.
		vars["KAIROS_WORKERS"] = "15"
	}
	return vars
}

// killMidFlood starts the first process and kills it with SIGKILL once a
// quarter of the flood has been answered.
func (f *flood) killMidFlood(t *testing.T, bin string) {
	t.Helper()
	f.t0 = time.Now()
	first := startProc(t, bin, f.vars)
	if _, err := f.tg.WaitSent(testCtx(t), len(f.texts)/4); err != nil {
		t.Fatalf("no replies before the kill: %v\n%s", err, first.logs.String())
	}
	first.stop(t, syscall.SIGKILL)
	before := countReplies(f.tg, f.texts, f.reply)
	t.Logf("%v: killed after %d complete replies, %d placeholders", time.Since(f.t0).Round(time.Millisecond), len(before.complete), len(before.stale))
}

// drain waits (until the test's deadline at most) until the second
// process has answered every update or has none left to do, stops it
// gracefully, and counts the replies it leaves.
func (f *flood) drain(t *testing.T, second *proc, updates *store.UpdateLog) tally {
	t.Helper()
	deadline := testkit.GiveUpAt(t)
	var tl tally
	for {
		tl = countReplies(f.tg, f.texts, f.reply)
		if len(tl.complete) >= len(f.texts) || time.Now().After(deadline) {
			break
		}
		// A lost reply never arrives: stop waiting once the fake has
		// handed out every update and the log has none left to do.
		if f.tg.Pending() == 0 {
			if p, err := updates.PendingUpdates(context.Background(), 1); err == nil && len(p) == 0 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Graceful stop: turns in flight finish, so everything the process
	// will ever send has been sent when it exits.
	t.Logf("%v: %d answered; stopping", time.Since(f.t0).Round(time.Millisecond), len(tl.complete))
	second.stop(t, syscall.SIGTERM)
	return countReplies(f.tg, f.texts, f.reply)
}

// judge checks the final replies tl: none doubled, nothing else sent,
// no update pending, and only the outbox parts of unknown outcome (at
// most one) account for a lost reply or a stale placeholder.
func (f *flood) judge(t *testing.T, tl tally, pending int, unknown []string, second *proc, knownBug string) {
	var lost, doubled, stale []string
	for _, s := range f.texts {
		switch n := tl.complete[s]; {
		case n == 0:
			lost = append(lost, s)
		case n > 1:
			doubled = append(doubled, fmt.Sprintf("%s ×%d", s, n))
		}
		if tl.stale[s] > 0 {
			stale = append(stale, s)
		}
	}
	t.Logf("after restart: %d/%d answered, lost %d, doubled %d, stale placeholders %d, outbox parts of unknown outcome %d %v, pending updates %d",
		len(tl.complete), len(f.texts), len(lost), len(doubled), len(stale), len(unknown), unknown, pending)
	if len(doubled) > 0 {
		t.Errorf("answered more than once: %q", doubled)
	}
	if len(tl.other) > 0 {
		t.Errorf("unexpected bot messages: %q", tl.other)
	}
	if pending > 0 {
		t.Errorf("%d updates still pending after a graceful stop", pending)
	}
	// The documented at-most-once edge: a part recorded 'sending' when
	// the process died is never sent again, so its reply may be lost, or
	// its streaming placeholder left behind beside the final answer (when
	// the placeholder went out but its message id was not recorded). Only
	// such parts may account for a missing reply or a stale placeholder.
	if len(lost)+len(stale) > len(unknown) {
		t.Errorf("lost %d replies %q and left %d placeholders %q, but only %d outbox parts were in flight at the kill:\n%s",
			len(lost), lost, len(stale), stale, len(unknown), second.logs.String())
	}
	// And the kill catches at most one send between its record and its
	// request (the sends are spaced by the limiter, each request takes a
	// millisecond): at most one reply may be lost.
	if len(lost) > 1 {
		if knownBug != "" {
			t.Skipf("KNOWN BUG (%s): lost %d replies %q", knownBug, len(lost), lost)
		}
		t.Errorf("lost %d replies %q: more than the one send a kill can interrupt", len(lost), lost)
	}
}

// TestScheduleSIGKILLBetweenClaimAndSend: a task falls due; `kairos run`
// claims its firing and starts the task (the model call hangs), and is
// killed with SIGKILL before anything is sent. Restarted on the same
// database, it delivers the task's answer once — not after the dead
// process's ten-minute firing lease, but within the short lease that a
// live delivery keeps renewing.
func TestScheduleSIGKILLBetweenClaimAndSend(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	bin := kairosBinary(t)
	e := newEnv(t)
	const user = 2002
	started := make(chan struct{})
	var calls sync.Mutex
	n := 0
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if !strings.Contains(r.LastUserMessage(), "Scheduled task") {
			return testkit.TextReply("ok")
		}
		calls.Lock()
		defer calls.Unlock()
		n++
		if n == 1 {
			close(started)
			return testkit.Reply{Text: "never", Delay: time.Hour} // the first process dies waiting
		}
		return testkit.TextReply("Your plan, delivered once.")
	})
	thread := kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0)
	due := time.Now().Add(time.Second)
	e.seedSchedules(t, &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: thread, Kind: kairos.ScheduleTask, Task: "plan my day",
		TZ: "UTC", NextRun: due, Start: due.UTC().Format("2006-01-02T15:04:05")})

	first := startProc(t, bin, e.vars)
	select {
	case <-started:
	case <-testCtx(t).Done():
		t.Fatalf("the task never reached the model:\n%s", first.logs.String())
	}
	first.stop(t, syscall.SIGKILL)
	if got := len(e.tg.SentTo(user)); got != 0 {
		t.Fatalf("%d messages before the restart", got)
	}

	second := startProc(t, bin, e.vars)
	db, err := store.Open(context.Background(), store.Config{DataDir: e.vars["KAIROS_DATA_DIR"], DatabaseURL: e.vars["KAIROS_DATABASE_URL"]})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := testkit.GiveUpAt(t)
	for count(t, db, "schedule_firings", "status = ?", kairos.FiringSent) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the firing was not delivered after the restart; sent %d:\n%s", len(e.tg.SentTo(user)), second.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	second.stop(t, syscall.SIGTERM)
	var answers int
	for _, m := range e.tg.SentTo(user) {
		if strings.Contains(m.LastText(), "Your plan, delivered once.") {
			answers++
		}
	}
	if answers != 1 || len(e.tg.SentTo(user)) != 1 {
		t.Fatalf("%d answers in %d messages", answers, len(e.tg.SentTo(user)))
	}
}
