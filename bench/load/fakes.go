package main

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// placeholderSuffix is what kairos appends to a streaming placeholder.
const placeholderSuffix = " …"

// telegram is a minimal Bot API: getUpdates with real offset semantics
// (an update stays queued until a later call's offset confirms it; long
// polling up to timeout), and the sending methods recorded per message.
type telegram struct {
	srv   *httptest.Server
	token string

	mu         sync.Mutex
	changed    chan struct{}
	nextUpdate int64
	queue      []update
	idOf       map[string]int64    // pushed text → update id
	pushedAt   map[int64]time.Time // update id → push time
	deliverAt  map[int64]time.Time // update id → first handed to kairos
	firstCall  time.Time           // the first Bot API request (getMe)
	firstPoll  time.Time
	nextMsg    map[int64]int64        // chat → last message id
	msgs       map[msgKey]*botMessage // the bot's messages
	done       map[string]time.Time   // reply text → first seen complete
	chatOrder  map[int64][]string     // chat → reply texts in the order completed
	calls      map[string]int         // method → count
	onComplete func(text string, t time.Time)
}

type update struct {
	id  int64
	raw json.RawMessage
}

type msgKey struct {
	chat int64
	id   int64
}

type botMessage struct {
	text  string // plain text after the last send or edit
	edits int
}

func newTelegram(token string) *telegram {
	tg := &telegram{
		token:      token,
		changed:    make(chan struct{}),
		nextUpdate: 500000,
		idOf:       map[string]int64{},
		pushedAt:   map[int64]time.Time{},
		deliverAt:  map[int64]time.Time{},
		nextMsg:    map[int64]int64{},
		msgs:       map[msgKey]*botMessage{},
		done:       map[string]time.Time{},
		chatOrder:  map[int64][]string{},
		calls:      map[string]int{},
	}
	tg.srv = httptest.NewServer(tg)
	return tg
}

func (tg *telegram) close() { tg.srv.CloseClientConnections(); tg.srv.Close() }

func (tg *telegram) signalLocked() {
	close(tg.changed)
	tg.changed = make(chan struct{})
}

// push queues a private text message from user chat to the bot.
func (tg *telegram) push(chat int64, text string) {
	id := tg.pushUpdate(chat, "message", map[string]any{"text": text})
	tg.mu.Lock()
	tg.idOf[text] = id
	tg.mu.Unlock()
}

// pushUpdate queues an update whose message (or callback query) is body,
// with the fake's bookkeeping of push.
func (tg *telegram) pushUpdate(chat int64, key string, body map[string]any) int64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.nextUpdate++
	id := tg.nextUpdate
	now := time.Now()
	u := map[string]any{"update_id": id}
	if key == "message" {
		tg.nextMsg[chat]++
		body["message_id"] = tg.nextMsg[chat]
		body["date"] = now.Unix()
		body["chat"] = map[string]any{"id": chat, "type": "private", "first_name": "Load"}
		body["from"] = map[string]any{"id": chat, "is_bot": false, "first_name": "Load"}
	}
	u[key] = body
	raw, _ := json.Marshal(u)
	tg.queue = append(tg.queue, update{id: id, raw: raw})
	tg.pushedAt[id] = now
	tg.signalLocked()
	return id
}

func (tg *telegram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix := "/bot" + tg.token + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		writeAPI(w, 404, nil, "Not Found")
		return
	}
	method := strings.TrimPrefix(r.URL.Path, prefix)
	var p map[string]json.RawMessage
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 {
		if err := json.Unmarshal(body, &p); err != nil {
			writeAPI(w, 400, nil, "Bad Request: can't parse JSON")
			return
		}
	}
	tg.mu.Lock()
	tg.calls[method]++
	if tg.firstCall.IsZero() {
		tg.firstCall = time.Now()
	}
	tg.mu.Unlock()
	switch method {
	case "getMe":
		writeAPI(w, 200, map[string]any{"id": 4242, "is_bot": true, "first_name": "Kairos Load", "username": "kairos_load_bot"}, "")
	case "getUpdates":
		tg.getUpdates(w, r, p)
	case "sendMessage":
		tg.sendMessage(w, p)
	case "editMessageText":
		tg.editMessageText(w, p)
	case "deleteMessage":
		tg.deleteMessage(w, p) // peer.go
	case "setMyCommands", "deleteWebhook", "sendChatAction", "answerCallbackQuery":
		writeAPI(w, 200, true, "")
	default:
		tg.peerMethod(w, method) // peer.go
	}
}

func writeAPI(w http.ResponseWriter, code int, result any, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code == 200 {
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": code, "description": desc})
}

func intParam(p map[string]json.RawMessage, name string) int64 {
	raw, ok := p[name]
	if !ok {
		return 0
	}
	s := strings.Trim(string(raw), `"`)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func strParam(p map[string]json.RawMessage, name string) string {
	var s string
	json.Unmarshal(p[name], &s)
	return s
}

func (tg *telegram) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]json.RawMessage) {
	offset := intParam(p, "offset")
	limit := intParam(p, "limit")
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timer := time.NewTimer(time.Duration(intParam(p, "timeout")) * time.Second)
	defer timer.Stop()
	tg.mu.Lock()
	if tg.firstPoll.IsZero() {
		tg.firstPoll = time.Now()
	}
	if offset > 0 { // confirms every update below offset
		i := 0
		for i < len(tg.queue) && tg.queue[i].id < offset {
			i++
		}
		tg.queue = tg.queue[i:]
	}
	for len(tg.queue) == 0 {
		ch := tg.changed
		tg.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			writeAPI(w, 200, []json.RawMessage{}, "")
			return
		case <-r.Context().Done():
			return
		}
		tg.mu.Lock()
	}
	n := min(int(limit), len(tg.queue))
	out := make([]json.RawMessage, n)
	now := time.Now()
	for i, u := range tg.queue[:n] {
		out[i] = u.raw
		if _, ok := tg.deliverAt[u.id]; !ok {
			tg.deliverAt[u.id] = now
		}
	}
	tg.mu.Unlock()
	writeAPI(w, 200, out, "")
}

// plain approximates what a user sees of kairos's HTML (the load's texts
// carry no markup).
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '<' {
			if j := strings.IndexByte(s[i:], '>'); j >= 0 {
				i += j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return html.UnescapeString(b.String())
}

func (tg *telegram) sendMessage(w http.ResponseWriter, p map[string]json.RawMessage) {
	chat := intParam(p, "chat_id")
	text := plain(strParam(p, "text"))
	if chat == 0 || text == "" {
		writeAPI(w, 400, nil, "Bad Request: chat_id and text are required")
		return
	}
	tg.mu.Lock()
	tg.nextMsg[chat]++
	id := tg.nextMsg[chat]
	tg.msgs[msgKey{chat, id}] = &botMessage{text: text}
	tg.seenLocked(chat, text)
	tg.mu.Unlock()
	writeAPI(w, 200, map[string]any{"message_id": id, "date": time.Now().Unix(), "chat": map[string]any{"id": chat, "type": "private"}, "text": text}, "")
}

func (tg *telegram) editMessageText(w http.ResponseWriter, p map[string]json.RawMessage) {
	chat := intParam(p, "chat_id")
	id := intParam(p, "message_id")
	text := plain(strParam(p, "text"))
	tg.mu.Lock()
	m := tg.msgs[msgKey{chat, id}]
	if m == nil {
		tg.mu.Unlock()
		writeAPI(w, 400, nil, "Bad Request: message to edit not found")
		return
	}
	if m.text == text {
		tg.mu.Unlock()
		writeAPI(w, 400, nil, "Bad Request: message is not modified")
		return
	}
	m.text = text
	m.edits++
	tg.seenLocked(chat, text)
	tg.mu.Unlock()
	writeAPI(w, 200, map[string]any{"message_id": id, "chat": map[string]any{"id": chat, "type": "private"}, "text": text}, "")
}

// seenLocked notes the first time a complete reply is visible.
func (tg *telegram) seenLocked(chat int64, text string) {
	if strings.HasSuffix(text, placeholderSuffix) || text == peerPlaceholder {
		return
	}
	if _, ok := tg.done[text]; ok {
		return
	}
	now := time.Now()
	tg.done[text] = now
	tg.chatOrder[chat] = append(tg.chatOrder[chat], text)
	if tg.onComplete != nil {
		tg.onComplete(text, now)
	}
}

// model is an instant OpenAI-compatible chat endpoint: it echoes the last
// user message, streamed in one chunk when asked to stream.
type model struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests int
	bytes    int64 // request bodies of /v1/chat/completions, summed
	maxBytes int
	other    map[string]int
	cover    coverage // peer.go
}

func newModel() *model {
	m := &model{other: map[string]int{}}
	m.srv = httptest.NewServer(m)
	return m
}

func (m *model) close() { m.srv.CloseClientConnections(); m.srv.Close() }

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		m.mu.Lock()
		m.other[r.URL.Path]++
		m.mu.Unlock()
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, 404)
		return
	}
	req, body, ok := m.decode(w, r)
	if !ok {
		return
	}
	m.cover.note(body)
	last := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = contentText(req.Messages[i].Content)
			break
		}
	}
	writeCompletion(w, req, "echo: "+last, "", "", "")
}

// decode reads a chat-completions request and counts its body; on a bad
// one it answers 400 and returns false.
func (m *model) decode(w http.ResponseWriter, r *http.Request) (chatReq, []byte, bool) {
	var req chatReq
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, 400)
		return req, nil, false
	}
	m.mu.Lock()
	m.requests++
	m.bytes += int64(len(body))
	m.maxBytes = max(m.maxBytes, len(body))
	m.mu.Unlock()
	return req, body, true
}

// chatReq is what the fakes read of a chat-completions request.
type chatReq struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
