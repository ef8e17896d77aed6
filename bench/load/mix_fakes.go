package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The mixed soak's additions to the fakes (mix.go): voice notes (getFile,
// the file download, /audio/transcriptions), approval buttons pressed
// through callback queries, tool calls from the model, and a SearXNG-like
// search server. Every message of the soak carries one token (tokenRe);
// the model answers "ok <token>", so a reply names the message it answers.

// tokenRe matches a soak token: kx<kind>_<chat>_<n>.
var tokenRe = regexp.MustCompile(`kx[a-z]+_\d+_\d+`)

// mixTelegram wraps the flood's fake Bot API with what the soak needs.
type mixTelegram struct {
	tg   *telegram
	soak *soak
}

func (m *mixTelegram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	filePrefix := "/file/bot" + m.tg.token + "/"
	if p, ok := strings.CutPrefix(r.URL.Path, filePrefix); ok {
		// A voice note's bytes are its token: the fake transcriber
		// reads it back.
		tok := strings.TrimSuffix(strings.TrimPrefix(p, "voice/"), ".oga")
		w.Header().Set("Content-Type", "audio/ogg")
		w.Write([]byte(tok))
		return
	}
	method := strings.TrimPrefix(r.URL.Path, "/bot"+m.tg.token+"/")
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var p map[string]json.RawMessage
	json.Unmarshal(body, &p)
	switch method {
	case "getFile":
		id := strParam(p, "file_id")
		writeAPI(w, 200, map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_size": len(id), "file_path": "voice/" + id + ".oga"}, "")
		return
	case "editMessageReplyMarkup", "sendVoice":
		writeAPI(w, 200, true, "")
		return
	case "sendMessage":
		m.soak.sawSend(intParam(p, "chat_id"), plain(strParam(p, "text")), p["reply_markup"])
	case "editMessageText":
		m.soak.sawEdit(plain(strParam(p, "text")))
	}
	m.tg.ServeHTTP(w, r)
}

// pressApprove presses the Approve button of a keyboard, as chat's user.
func (tg *telegram) pressApprove(chat, msgID int64, data string) {
	tg.pushUpdate(chat, "callback_query", map[string]any{
		"id":            fmt.Sprintf("cb%d-%d", chat, msgID),
		"from":          map[string]any{"id": chat, "is_bot": false, "first_name": "Soak"},
		"chat_instance": "soak",
		"data":          data,
		"message": map[string]any{"message_id": msgID, "date": time.Now().Unix(), "text": "approval",
			"chat": map[string]any{"id": chat, "type": "private"}},
	})
}

// lastMessage is the id of the bot's latest message to chat that reads
// text (0 when none).
func (tg *telegram) lastMessage(chat int64, text string) int64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var id int64
	for k, m := range tg.msgs {
		if k.chat == chat && m.text == text && k.id > id {
			id = k.id
		}
	}
	return id
}

// approveData returns the callback data of an Approve button in markup.
func approveData(markup json.RawMessage) (string, bool) {
	var kb struct {
		Rows [][]struct {
			Text string `json:"text"`
			Data string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if len(markup) > 0 && markup[0] == '"' { // sent as a JSON string
		var s string
		json.Unmarshal(markup, &s)
		markup = json.RawMessage(s)
	}
	json.Unmarshal(markup, &kb)
	for _, row := range kb.Rows {
		for _, b := range row {
			if b.Text == "Approve" {
				return b.Data, true
			}
		}
	}
	return "", false
}

// mixModel is an instant OpenAI-compatible endpoint that calls the
// built-in tools a message's token asks for, then answers "ok <token>";
// it also transcribes a voice note (its bytes are its token).
type mixModel struct {
	m      *model // the counters the flood's report reads
	mu     sync.Mutex
	nextID int
}

func (mm *mixModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
		mm.chat(w, r)
	case "/v1/audio/transcriptions":
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, `{"error":{"message":"no file","type":"invalid_request_error"}}`, 400)
			return
		}
		b, _ := io.ReadAll(f)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"text": "voice note " + string(b)})
	default:
		mm.m.mu.Lock()
		mm.m.other[r.URL.Path]++
		mm.m.mu.Unlock()
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, 404)
	}
}

func (mm *mixModel) chat(w http.ResponseWriter, r *http.Request) {
	req, _, ok := mm.m.decode(w, r)
	if !ok {
		return
	}
	tok, toolDone := "", false
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "tool" {
			toolDone = true
		}
		if req.Messages[i].Role == "user" {
			toks := tokenRe.FindAllString(contentText(req.Messages[i].Content), -1)
			if len(toks) > 0 {
				tok = toks[len(toks)-1]
			}
			break
		}
	}
	name, args := "", ""
	if !toolDone {
		name, args = toolFor(tok)
	}
	mm.mu.Lock()
	mm.nextID++
	callID := fmt.Sprintf("call_%d", mm.nextID)
	mm.mu.Unlock()
	writeCompletion(w, req, "ok "+tok, name, args, callID)
}

// toolFor is the tool call a token's kind asks for ("" for none).
func toolFor(tok string) (name, args string) {
	kind, rest, _ := strings.Cut(strings.TrimPrefix(tok, "kx"), "_")
	j := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	switch kind {
	case kindCell:
		return "code", j(map[string]any{"action": "execute", "code": "let s = 0; for (let i = 0; i < 20000; i++) { s += i % 7; } s"})
	case kindSearch:
		return "search", j(map[string]any{"query": "soak weather " + rest, "max_results": 3})
	case kindRemember:
		return "memory", j(map[string]any{"action": "store", "content": "The soak user likes tea number " + rest, "tags": []string{"soak"}})
	case kindRecall:
		return "memory", j(map[string]any{"action": "recall", "query": "tea"})
	case kindRemind:
		return "schedule", j(map[string]any{"action": "create", "when": "in 1 minute", "text": "kxfire_" + rest})
	}
	return "", ""
}

// writeCompletion answers with text, or with one call of tool name,
// streamed in one chunk when the request asks to stream.
func writeCompletion(w http.ResponseWriter, req chatReq, text, name, args, callID string) {
	created := time.Now().Unix()
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
	finish := "stop"
	msg := map[string]any{"role": "assistant", "content": text}
	if name != "" {
		finish = "tool_calls"
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": callID, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-soak", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v map[string]any) {
		v["id"], v["object"], v["created"], v["model"] = "chatcmpl-soak", "chat.completion.chunk", created, req.Model
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": msg}}})
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
	chunk(map[string]any{"choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// searchHandler is a SearXNG JSON API with three results for any query.
func searchHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	var res []map[string]any
	for i := range 3 {
		res = append(res, map[string]any{"title": fmt.Sprintf("Result %d for %s", i+1, q),
			"url": fmt.Sprintf("https://example.org/%d", i+1), "content": "A short snippet about " + q + "."})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"query": q, "results": res})
}
