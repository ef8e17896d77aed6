package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// call posts a Bot API method with a JSON body to the fake and returns the
// HTTP status and the decoded reply.
func call(t *testing.T, tg *telegram, method string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(tg.srv.URL+"/bot"+tg.token+"/"+method, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
	return resp.StatusCode, out
}

// PicoClaw's flow: a placeholder, later edited into the reply. The
// placeholder is no reply; left unedited, it is a stale placeholder.
func TestPeerPlaceholderIsNoReply(t *testing.T) {
	tg := newTelegram(peerToken)
	defer tg.close()
	for _, chat := range []int64{10001, 10002} {
		if code, _ := call(t, tg, "sendMessage", map[string]any{"chat_id": chat, "text": peerPlaceholder}); code != 200 {
			t.Fatalf("placeholder: %d", code)
		}
	}
	// Chat 10001's placeholder (message 1) becomes the reply; 10002's stays.
	if code, _ := call(t, tg, "editMessageText", map[string]any{"chat_id": 10001, "message_id": 1, "text": "echo: load 10001 m0"}); code != 200 {
		t.Fatalf("edit: %d", code)
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if _, ok := tg.done[peerPlaceholder]; ok {
		t.Errorf("the placeholder was taken for a complete reply")
	}
	if got := tg.chatOrder[10001]; len(got) != 1 || got[0] != "echo: load 10001 m0" {
		t.Errorf("chat 10001's replies = %q, want only the edited reply", got)
	}
	f := countFaults(tg, map[int64][]string{10001: {"echo: load 10001 m0"}, 10002: {"echo: load 10002 m0"}})
	if f.lost != 1 || f.stale != 1 || f.other != 0 || f.outOfOrder != 0 {
		t.Errorf("faults = %+v, want lost 1, stale 1, other 0, out of order 0", f)
	}
}

// The methods only PicoClaw (telego) calls are answered as the Bot API
// does; an unknown one is a 404 the report marks.
func TestPeerMethods(t *testing.T) {
	tg := newTelegram(peerToken)
	defer tg.close()
	if code, out := call(t, tg, "getMyCommands", map[string]any{}); code != 200 || fmt.Sprint(out["result"]) != "[]" {
		t.Errorf("getMyCommands = %d %v, want 200 and []", code, out)
	}
	if code, out := call(t, tg, "sendMessageDraft", map[string]any{"chat_id": 10001, "draft_id": 7, "text": "ec"}); code != 200 || out["result"] != true {
		t.Errorf("sendMessageDraft = %d %v, want 200 and true", code, out)
	}
	if code, _ := call(t, tg, "sendSticker", map[string]any{"chat_id": 10001}); code != 404 {
		t.Errorf("sendSticker = %d, want 404", code)
	}
	if knownMethod("sendSticker") || !knownMethod("sendMessageDraft") {
		t.Errorf("knownMethod disagrees with the fake")
	}
}

// The model's coverage finds every load text in a request, however the
// agent wraps or joins them, and counts each text once.
func TestCoverageFindsFoldedMessages(t *testing.T) {
	var c coverage
	req := func(users ...string) []byte {
		var msgs []map[string]any
		msgs = append(msgs, map[string]any{"role": "system", "content": "load 1 m1 in the system prompt does not count"})
		for _, u := range users {
			msgs = append(msgs, map[string]any{"role": "user", "content": u})
		}
		b, _ := json.Marshal(map[string]any{"messages": msgs})
		return b
	}
	c.note(req("[Sat 21:00] load 10001 m0", "load 10001 m1\nload 10001 m2"))
	c.note(req("load 10001 m0", "load 10001 m3"))
	parts, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "load 10002 m0"}}}}})
	c.note(parts)
	want := map[string]int{"load 10001 m0": 2, "load 10001 m1": 1, "load 10001 m2": 1, "load 10001 m3": 1, "load 10002 m0": 1}
	if fmt.Sprint(c.seen) != fmt.Sprint(want) {
		t.Errorf("seen = %v, want %v", c.seen, want)
	}
}

// PicoClaw's config holds what the load needs: the fakes' URLs, a token
// telego accepts, the load's chats, and a gateway port of its own.
func TestPicoclawConfig(t *testing.T) {
	cfg := picoclawConfig("/h", "http://tg", "http://model", 3, 16, false, 4242)
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"base_url":"http://tg"`, `"api_base":"http://model/v1"`, `"allow_from":["10001","10002","10003"]`,
		`"max_parallel_turns":16`, `"port":4242`, `"version":3`, `"token":"` + peerToken + `"`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("config lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(string(raw), "streaming") {
		t.Errorf("streaming is on without -peer-streaming: %s", raw)
	}
	tok := strings.SplitN(peerToken, ":", 2)
	if len(tok) != 2 || len(tok[1]) != 35 {
		t.Errorf("peerToken %q: telego wants 35 characters after the colon", peerToken)
	}
}

// The closed loop reads the chat and the index back from a reply.
func TestEchoTextParses(t *testing.T) {
	sm := echoText.FindStringSubmatch("echo: load 10042 m3")
	if sm == nil || sm[1] != "10042" || sm[2] != "3" {
		t.Errorf("echoText = %q", sm)
	}
	if echoText.MatchString(peerPlaceholder) || echoText.MatchString("echo: load 10042 m3 …") {
		t.Errorf("echoText matches what is no complete reply")
	}
}

// A deleted message is gone, as on Telegram: PicoClaw deletes its
// placeholder when it streams, and that placeholder is not stale.
func TestDeleteMessageRemoves(t *testing.T) {
	tg := newTelegram(peerToken)
	defer tg.close()
	call(t, tg, "sendMessage", map[string]any{"chat_id": 10001, "text": peerPlaceholder})
	call(t, tg, "sendMessage", map[string]any{"chat_id": 10001, "text": "echo: load 10001 m0"})
	if code, _ := call(t, tg, "deleteMessage", map[string]any{"chat_id": 10001, "message_id": 1}); code != 200 {
		t.Fatalf("deleteMessage = %d", code)
	}
	if code, _ := call(t, tg, "deleteMessage", map[string]any{"chat_id": 10001, "message_id": 1}); code != 400 {
		t.Errorf("deleting it again = %d, want 400", code)
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if f := countFaults(tg, map[int64][]string{10001: {"echo: load 10001 m0"}}); f != (faults{}) {
		t.Errorf("faults = %+v, want none", f)
	}
}
