package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestFirstHourAsNewOperator walks the README's set-up with the built
// binary in an empty folder, against the fake Telegram and model: every
// command's --help, `kairos run` with no policy, the claim line, /start
// <code>, a first message, a reminder approved and delivered. The steps
// are logged as a transcript (go test -v -run TestFirstHourAsNewOperator).
func TestFirstHourAsNewOperator(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("drives the binary for a while")
	}
	h := newFirstHour(t)
	h.readHelp()
	claim := h.startRun()
	const me = 424242
	chat := func(text string, n int, want string) string {
		h.say("me> %s", text)
		h.tg.PushText(me, me, text, time.Now())
		got := waitReply(t, h.tg, me, n, want)
		h.say("bot> %s", got)
		return got
	}
	chat("hello?", 1, "pairing code")
	chat("/start "+claim, 2, "operator")
	chat("hello", 3, "Hello!")
	chat("/clock tz Europe/Lisbon", 4, "Europe/Lisbon")
	chat("remind me to stretch in 5 seconds", 5, "Approval needed")
	h.say("(presses Approve)")
	if _, err := h.tg.PressButton(me, me, "Approve"); err != nil {
		t.Fatal(err)
	}
	// The answer and the reminder, in either order: a reminder is sent at
	// its time without waiting for the chat's turn, and a press 5 s after
	// the create (a busy machine) makes it due before the answer is sent.
	waitSent(t, h.tg, me, "remind you")
	waitSent(t, h.tg, me, "⏰ stretch")
	for _, s := range h.tg.SentTo(me)[5:] {
		h.say("bot> %s", s.LastText())
	}
	list, _ := h.kairos("access", "list")
	h.say("\n$ kairos access list\n%s", list)
	if !strings.Contains(list, "424242\toperator") {
		t.Errorf("access list = %q", list)
	}
	sched, _ := h.kairos("schedule", "list")
	h.say("$ kairos schedule list\n%s", sched)
	t.Log("transcript:\n" + h.transcript.String())
}

// firstHour is a new operator's empty folder, environment and fakes, and
// the transcript of what they did.
type firstHour struct {
	t          *testing.T
	bin, dir   string
	env        []string
	tg         *testkit.FakeTelegram
	llm        *testkit.FakeOpenAI
	transcript strings.Builder
}

func newFirstHour(t *testing.T) *firstHour {
	h := &firstHour{t: t, bin: kairosBin.Path(t), dir: t.TempDir(), tg: testkit.NewFakeTelegram(t, ""), llm: testkit.NewFakeOpenAI(t)}
	h.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "TELEGRAM_BOT_TOKEN=" + h.tg.Token(), "TELEGRAM_API_URL=" + h.tg.URL(),
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + h.llm.URL(), "KAIROS_HTTP_ADDR=127.0.0.1:0", "KAIROS_SEARCH_URL=http://127.0.0.1:1"}
	return h
}

func (h *firstHour) say(format string, args ...any) { fmt.Fprintf(&h.transcript, format+"\n", args...) }

// kairos runs the binary to the end and returns its output and exit code.
func (h *firstHour) kairos(args ...string) (string, int) {
	cmd := exec.Command(h.bin, args...)
	cmd.Dir, cmd.Env = h.dir, h.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return out.String(), code
}

// readHelp reads `kairos --help` and every command's --help, which must
// say its usage and write nothing to the folder.
func (h *firstHour) readHelp() {
	t := h.t
	top, code := h.kairos("--help")
	h.say("$ kairos --help   (exit %d)\n%s", code, top)
	for _, c := range sortedCommands() {
		out, code := h.kairos(append(strings.Fields(c.Name), "--help")...)
		if code != 0 || !strings.HasPrefix(out, "usage: kairos "+c.Name) {
			t.Errorf("%s --help: exit %d, %q", c.Name, code, out)
		}
		h.say("$ kairos %s --help   (exit %d): %s", c.Name, code, strings.SplitN(out, "\n", 2)[0])
	}
	if ents, _ := os.ReadDir(h.dir); len(ents) != 0 {
		t.Fatalf("--help wrote %v", ents)
	}
}

// startRun starts `kairos run` (interrupted when the test ends) with a
// model that greets and makes a reminder, and returns the claim code it
// logs.
func (h *firstHour) startRun() string {
	t := h.t
	h.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "remind me"):
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","when":"in 5 seconds","text":"stretch"}`})
		case last.Role == "tool":
			return testkit.TextReply("Done: I'll remind you to stretch in 5 seconds.")
		}
		return testkit.TextReply("Hello! I'm Kairos. It's **" + time.Now().UTC().Format("15:04") + "** UTC here.")
	})
	run := exec.Command(h.bin, "run")
	run.Dir, run.Env = h.dir, h.env
	logs := &syncBuffer{}
	run.Stdout, run.Stderr = logs, logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Signal(os.Interrupt); run.Wait() })
	h.say("\n$ TELEGRAM_BOT_TOKEN=… OPENAI_API_KEY=… ./kairos run")
	claimLine := regexp.MustCompile(`send /start ([A-Z2-7-]{19}) to your bot`)
	ctx := testCtx(t)
	for claimLine.FindStringSubmatch(logs.String()) == nil {
		if ctx.Err() != nil {
			t.Fatalf("no claim line:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.say("%s", logs.String())
	return claimLine.FindStringSubmatch(logs.String())[1]
}
