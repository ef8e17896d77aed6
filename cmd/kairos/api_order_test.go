package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// holdModel holds the first chat call until released and notes whether
// any call ran beside another.
type holdModel struct {
	mu      sync.Mutex
	calls   int
	active  int
	overlap bool
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHoldModel(t *testing.T) *holdModel {
	h := &holdModel{held: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.let)
	return h
}

func (h *holdModel) let() { h.once.Do(func() { close(h.release) }) }

func (h *holdModel) reply(r testkit.ChatRequest) testkit.Reply {
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.active++
	h.overlap = h.overlap || h.active > 1
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.active--
		h.mu.Unlock()
	}()
	if n == 1 {
		close(h.held)
		<-h.release
		return testkit.TextReply("FIRST-ANSWER")
	}
	return testkit.TextReply("SECOND-ANSWER")
}

// sawFirstAnswer says whether a model request holds the held turn's
// answer (the turn after it ran once it was done, not beside it).
func sawFirstAnswer(req testkit.ChatRequest) bool {
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "FIRST-ANSWER") {
			return true
		}
	}
	return false
}

func (h *holdModel) ranBeside() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.overlap
}

type apiResult struct {
	code int
	body map[string]any
	err  error
}

// postMessage calls POST /api/v1/messages (from any goroutine).
func postMessage(addr, token, body string) apiResult {
	req, err := http.NewRequest("POST", "http://"+addr+"/api/v1/messages", strings.NewReader(body))
	if err != nil {
		return apiResult{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return apiResult{err: err}
	}
	defer resp.Body.Close()
	var v map[string]any
	err = json.NewDecoder(resp.Body).Decode(&v)
	return apiResult{code: resp.StatusCode, body: v, err: err}
}

// queueDepth reads kairos_queue_depth from /metrics.
func queueDepth(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "kairos_queue_depth "); ok {
			return v
		}
	}
	return ""
}

// TestAPITurnWaitsForTheChatsTelegramTurn: a turn through POST
// /api/v1/messages and a Telegram message of the same chat take turns,
// in either order, as two Telegram messages do: while the model holds
// the first, the second waits in the chat's queue (it used to run beside
// it), and it then sees the first one's answer in the thread's history.
func TestAPITurnWaitsForTheChatsTelegramTurn(t *testing.T) {
	parallel(t)
	for _, apiFirst := range []bool{true, false} {
		name := map[bool]string{true: "api then telegram", false: "telegram then api"}[apiFirst]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			h := newHoldModel(t)
			e.llm.SetHandler(h.reply)
			write := e.apiToken(t, "write", "script")
			addr := e.start()
			api := make(chan apiResult, 1)
			post := func(text string) {
				go func() { api <- postMessage(addr, write, `{"user_id": 2002, "text": "`+text+`", "deliver": false}`) }()
			}
			first, second := "from telegram", "from the api"
			if apiFirst {
				first, second = second, first
				post(first)
			} else {
				e.tg.PushText(2002, 2002, first, time.Now())
			}
			select {
			case <-h.held:
			case <-testCtx(t).Done():
				t.Fatal("the first turn never reached the model")
			}
			if apiFirst {
				e.tg.PushText(2002, 2002, second, time.Now())
			} else {
				post(second)
			}
			// The second turn either waits in the chat's queue (depth 1) or,
			// as it did, reaches the model beside the first.
			ctx := testCtx(t)
			for !h.ranBeside() && queueDepth(t, addr) != "1" {
				if ctx.Err() != nil {
					t.Fatal("the second turn neither queued nor ran")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if h.ranBeside() {
				t.Fatal("the second turn called the model while the first held it")
			}
			h.let()
			res := <-api
			if res.err != nil || res.code != 200 {
				t.Fatalf("messages: %d %v %v", res.code, res.body, res.err)
			}
			body := res.body
			waitReply(t, e.tg, 2002, 1, map[bool]string{true: "SECOND-ANSWER", false: "FIRST-ANSWER"}[apiFirst])
			if want := map[bool]string{true: "FIRST-ANSWER", false: "SECOND-ANSWER"}[apiFirst]; body["answer"] != want {
				t.Fatalf("the API answered %v, want %q", body, want)
			}
			reqs := e.llm.Requests()
			if len(reqs) != 2 || h.ranBeside() {
				t.Fatalf("%d model calls, overlapping %v", len(reqs), h.ranBeside())
			}
			last := reqs[1]
			if last.LastUserMessage() != second {
				t.Fatalf("the second call was for %q", last.LastUserMessage())
			}
			if !sawFirstAnswer(last) {
				t.Fatalf("the second turn did not see the first one's answer: %+v", last.Messages)
			}
		})
	}
}
