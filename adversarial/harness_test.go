package adversarial

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/store"
)

// secret is the operator's secret every section tries to steal.
const secret = "sk-adv-Q9w8E7r6T5y4U3i2O1p0"

// kairosBin is ./cmd/kairos, built once per run.
var kairosBin = &testkit.Binary{Pkg: "../cmd/kairos"}

func kairosBinary(t *testing.T) string { return kairosBin.Path(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	kairosBin.Remove()
	os.Exit(code)
}

// rig is one `kairos run` process wired to fakes.
type rig struct {
	t    *testing.T
	tg   *testkit.FakeTelegram
	llm  *testkit.FakeOpenAI
	dir  string
	vars map[string]string
	logs *testkit.SyncBuffer
	proc *os.Process // the running `kairos run`, once started
}

func newRig(t *testing.T, policy string) *rig {
	t.Helper()
	r := &rig{t: t, tg: testkit.NewFakeTelegram(t, ""), llm: testkit.NewFakeOpenAI(t), dir: t.TempDir(), logs: &testkit.SyncBuffer{}}
	pol := filepath.Join(r.dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	r.vars = map[string]string{
		"TELEGRAM_BOT_TOKEN":    r.tg.Token(),
		"TELEGRAM_API_URL":      r.tg.URL(),
		"OPENAI_BASE_URL":       r.llm.URL(),
		"KAIROS_MODEL":          "test-model",
		"KAIROS_DATA_DIR":       filepath.Join(r.dir, "data"),
		"KAIROS_POLICY":         pol,
		"KAIROS_HTTP_ADDR":      "127.0.0.1:0",
		"KAIROS_SEARCH_URL":     "http://127.0.0.1:1",
		"KAIROS_SECRET_API_KEY": secret,
		"KAIROS_LOG_LEVEL":      "debug",
	}
	return r
}

// db opens the rig's database (migrating it when the process has not yet).
func (r *rig) db() *store.DB {
	r.t.Helper()
	db, err := store.Open(context.Background(), store.Config{DataDir: r.vars["KAIROS_DATA_DIR"]})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { db.Close() })
	return db
}

// start runs `kairos run` until the test ends.
func (r *rig) start() {
	r.t.Helper()
	cmd := exec.Command(kairosBinary(r.t), "run")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.dir}
	for k, v := range r.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.proc = cmd.Process
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	r.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// waitText waits until some message sent to chat contains want.
func (r *rig) waitText(chat int64, want string) {
	r.t.Helper()
	deadline := testkit.GiveUpAt(r.t)
	for time.Now().Before(deadline) {
		for _, m := range r.tg.SentTo(chat) {
			if strings.Contains(m.LastText(), want) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	var got []string
	for _, m := range r.tg.SentTo(chat) {
		got = append(got, m.LastText())
	}
	r.t.Fatalf("chat %d never got %q; it got %q\nlogs:\n%s", chat, want, got, tail(r.logs.String(), 3000))
}

// transcript is every text the bot sent, in all chats.
func (r *rig) transcript() string {
	var b strings.Builder
	for _, m := range r.tg.Sent() {
		b.WriteString(m.LastText())
		b.WriteString(string(m.LastReplyMarkup()))
		b.WriteByte('\n')
	}
	return b.String()
}

// modelInput is everything the model was sent.
func (r *rig) modelInput() string {
	var b strings.Builder
	for _, req := range r.llm.Requests() {
		for _, m := range req.Messages {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// dbText is every text column of the tables that hold what users and
// tools said.
func dbText(t *testing.T, db *store.DB) string {
	t.Helper()
	var b strings.Builder
	for table, cols := range map[string][]string{
		"messages":        {"content", "tool_calls"},
		"memories":        {"content", "tags"},
		"tool_calls":      {"arguments", "result"},
		"code_executions": {"code", "stdout", "stderr", "output", "error"},
		"schedules":       {"text", "task", "code"},
		"approvals":       {"text", "state"},
	} {
		for _, c := range cols {
			var vals []string
			if err := db.Gorm().Table(table).Pluck(c, &vals).Error; err != nil {
				continue // a column this schema does not have
			}
			b.WriteString(strings.Join(vals, "\n"))
		}
	}
	return b.String()
}

func count(t *testing.T, db *store.DB, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Gorm().Table(table).Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// tally counts a section's cases.
type tally struct {
	mu                       sync.Mutex
	tried, contained, leaked int
	failures                 []string
}

func (s *tally) add(name string, ok bool, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tried++
	if ok {
		s.contained++
	} else {
		s.leaked++
		s.failures = append(s.failures, name+": "+why)
	}
}

func (s *tally) report(t *testing.T, section string) {
	t.Helper()
	t.Logf("%s: tried %d, contained %d, leaked %d", section, s.tried, s.contained, s.leaked)
	for _, f := range s.failures {
		t.Errorf("%s: %s", section, f)
	}
}
