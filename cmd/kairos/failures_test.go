package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestRefusedTelegramTokenIsOneLine: a token Telegram refuses ends `run`
// with exit 2 and one line naming the variable, without the token.
func TestRefusedTelegramTokenIsOneLine(t *testing.T) {
	e := newEnv(t)
	e.tg.InjectError("getMe", 1, 401, "Unauthorized")
	code := e.main().Main(context.Background(), []string{"run"})
	var last string
	for _, l := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if strings.HasPrefix(l, "kairos: ") {
			last = l
		}
	}
	if code != 2 || !strings.Contains(last, "Telegram refused TELEGRAM_BOT_TOKEN (401") {
		t.Fatalf("exit %d, final line %q:\n%s", code, last, e.logs.String())
	}
	if strings.Contains(e.logs.String(), e.tg.Token()) {
		t.Fatal("the token is in the output")
	}
}

// TestTelegramDownAtStartIsRetried: 5xx and a refused connection at start
// are retried with backoff; the bot then answers.
func TestTelegramDownAtStartIsRetried(t *testing.T) {
	e := newEnv(t)
	e.tg.InjectError("getMe", 1, 502, "Bad Gateway")
	e.tg.InjectNetworkError("getMe", 1)
	e.llm.Enqueue(testkit.TextReply("up again"))
	e.start()
	e.tg.PushText(2002, 2002, "hello", time.Now())
	waitReply(t, e.tg, 2002, 1, "up again")
	if n := strings.Count(e.logs.String(), "Telegram not reachable at start; retrying"); n != 2 {
		t.Fatalf("%d retry lines, want 2:\n%s", n, e.logs.String())
	}
	if strings.Contains(e.logs.String(), e.tg.Token()) {
		t.Fatal("the token is in the log")
	}
}

// TestRefusedModelKeyTellsOperators: a 401 from the model endpoint gives
// the user a message that says what happened (not "try again in a
// minute"), one error line naming OPENAI_API_KEY, and one message to the
// operator, not repeated on the next turn.
func TestRefusedModelKeyTellsOperators(t *testing.T) {
	e := newEnv(t)
	e.llm.SetAPIKey("sk-the-right-key")
	e.vars["OPENAI_API_KEY"] = "sk-a-wrong-key"
	e.start()
	e.tg.PushText(2002, 2002, "hello", time.Now())
	got := waitReply(t, e.tg, 2002, 1, "refused my API key")
	if strings.Contains(got, "in a minute") {
		t.Fatalf("user told to wait: %q", got)
	}
	waitReply(t, e.tg, operatorID, 1, "Check OPENAI_API_KEY")
	e.tg.PushText(2002, 2002, "hello again", time.Now())
	waitReply(t, e.tg, 2002, 2, "refused my API key")
	if n := len(e.tg.SentTo(operatorID)); n != 1 {
		t.Fatalf("operator told %d times", n)
	}
	if n := strings.Count(e.logs.String(), "check OPENAI_API_KEY"); n != 1 {
		t.Fatalf("%d alert lines:\n%s", n, e.logs.String())
	}
	if strings.Contains(e.logs.String(), "sk-a-wrong-key") {
		t.Fatal("the key is in the log")
	}
}

// TestHungModelGivesUpWithinThePolicyLimit: an endpoint that never
// answers costs the user agent.model_timeout (retries included), then one
// message saying so.
func TestHungModelGivesUpWithinThePolicyLimit(t *testing.T) {
	e := newEnv(t)
	setPolicy(t, e, "agent:\n  model_timeout: PT2S\n  retries: 3\n")
	e.llm.SetHandler(func(testkit.ChatRequest) testkit.Reply { return testkit.Reply{Text: "late", Delay: 10 * time.Minute} })
	e.start()
	e.tg.PushText(2002, 2002, "hello", time.Now())
	waitReply(t, e.tg, 2002, 1, "did not answer within 2s")
	if n := len(e.tg.SentTo(2002)); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}

// TestLongWorkShowsChatActions: while a voice note is transcribed the
// chat shows record_voice, repeated every few seconds, then typing for
// the model's turn; nothing after the answer.
func TestLongWorkShowsChatActions(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	e.llm.SetTranscriber(func(testkit.TranscriptionRequest) testkit.Reply {
		<-release // a slow transcription server, until the test has seen enough
		return testkit.Reply{Text: "what time is it"}
	})
	e.llm.Enqueue(testkit.TextReply("It is noon."))
	e.start()
	actions := func(want string) int {
		n := 0
		for _, c := range e.tg.Calls("sendChatAction") {
			if c.Params["chat_id"] == "2002" && c.Params["action"] == want {
				n++
			}
		}
		return n
	}
	f := e.tg.AddFile("voice", "file.oga", "audio/ogg", oggVoice(4096))
	e.tg.PushVoice(2002, 2002, f, 61, time.Now())
	if err := e.tg.WaitUntil(testCtx(t), func() bool { return actions("record_voice") >= 2 }); err != nil {
		t.Fatalf("record_voice shown %d times while transcribing", actions("record_voice"))
	}
	close(release)
	waitReply(t, e.tg, 2002, 1, "It is noon.")
	if actions("typing") < 1 {
		t.Fatal("no typing action for the model's turn")
	}
	calls := e.tg.Calls("sendChatAction")
	sent := e.tg.SentTo(2002)
	if last := calls[len(calls)-1]; !sent[0].Time.IsZero() && last.Time.After(sent[len(sent)-1].Time.Add(time.Second)) {
		t.Errorf("a chat action after the answer: %+v", last)
	}
}
