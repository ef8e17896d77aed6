package main

import (
	"bytes"
	"context"
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
	if testing.Short() {
		t.Skip("drives the binary for a while")
	}
	bin := kairosBin.Path(t)
	dir := t.TempDir()
	var transcript strings.Builder
	say := func(format string, args ...any) { fmt.Fprintf(&transcript, format+"\n", args...) }
	tg, llm := testkit.NewFakeTelegram(t, ""), testkit.NewFakeOpenAI(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + llm.URL(), "KAIROS_HTTP_ADDR=127.0.0.1:0", "KAIROS_SEARCH_URL=http://127.0.0.1:1"}
	kairos := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return out.String(), code
	}
	top, code := kairos("--help")
	say("$ kairos --help   (exit %d)\n%s", code, top)
	for _, c := range sortedCommands() {
		out, code := kairos(append(strings.Fields(c.Name), "--help")...)
		if code != 0 || !strings.HasPrefix(out, "usage: kairos "+c.Name) {
			t.Errorf("%s --help: exit %d, %q", c.Name, code, out)
		}
		say("$ kairos %s --help   (exit %d): %s", c.Name, code, strings.SplitN(out, "\n", 2)[0])
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("--help wrote %v", ents)
	}

	llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "remind me"):
			return testkit.ToolReply(testkit.ToolCall{Name: "schedule", Arguments: `{"action":"create","when":"in 5 seconds","text":"stretch"}`})
		case last.Role == "tool":
			return testkit.TextReply("Done: I'll remind you to stretch in 5 seconds.")
		}
		return testkit.TextReply("Hello! I'm Kairos. It's **" + time.Now().UTC().Format("15:04") + "** UTC here.")
	})
	run := exec.Command(bin, "run")
	run.Dir, run.Env = dir, env
	logs := &syncBuffer{}
	run.Stdout, run.Stderr = logs, logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { run.Process.Signal(os.Interrupt); run.Wait() }()
	say("\n$ TELEGRAM_BOT_TOKEN=… OPENAI_API_KEY=… ./kairos run")
	code2 := regexp.MustCompile(`send /start ([A-Z2-7-]{19}) to your bot`)
	ctx := testCtx(t)
	for code2.FindStringSubmatch(logs.String()) == nil {
		if ctx.Err() != nil {
			t.Fatalf("no claim line:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	claim := code2.FindStringSubmatch(logs.String())[1]
	say("%s", logs.String())

	const me = 424242
	chat := func(text string, n int, want string) string {
		say("me> %s", text)
		tg.PushText(me, me, text, time.Now())
		got := waitReply(t, tg, me, n, want)
		say("bot> %s", got)
		return got
	}
	chat("hello?", 1, "pairing code")
	chat("/start "+claim, 2, "operator")
	chat("hello", 3, "Hello!")
	chat("/clock tz Europe/Lisbon", 4, "Europe/Lisbon")
	chat("remind me to stretch in 5 seconds", 5, "Approval needed")
	say("(presses Approve)")
	if _, err := tg.PressButton(me, me, "Approve"); err != nil {
		t.Fatal(err)
	}
	say("bot> %s", waitReply(t, tg, me, 6, "remind you"))
	say("bot> %s", waitReply(t, tg, me, 7, "⏰ stretch"))
	list, _ := kairos("access", "list")
	say("\n$ kairos access list\n%s", list)
	if !strings.Contains(list, "424242\toperator") {
		t.Errorf("access list = %q", list)
	}
	sched, _ := kairos("schedule", "list")
	say("$ kairos schedule list\n%s", sched)
	t.Log("transcript:\n" + transcript.String())
	_ = context.Background
}
