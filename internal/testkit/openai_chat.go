package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// --- chat completions ----------------------------------------------------------

func (f *FakeOpenAI) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	f.mu.Lock()
	now := f.now()
	f.mu.Unlock()
	var wr wireRequest
	if err != nil || json.Unmarshal(body, &wr) != nil {
		f.recordChat(ChatRequest{Raw: json.RawMessage(body), Time: now})(400)
		writeOAError(w, 400, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "invalid_request_error", "", "")
		return
	}
	req := decodeChat(wr, body)
	req.Time = now
	answered := f.recordChat(req)
	if msg, param := validateChat(wr); msg != "" {
		answered(400)
		writeOAError(w, 400, msg, "invalid_request_error", "", param)
		return
	}
	f.mu.Lock()
	known := f.knownModelLocked(req.Model)
	f.mu.Unlock()
	if !known {
		answered(404)
		writeOAError(w, 404, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model), "invalid_request_error", "model_not_found", "")
		return
	}
	q := f.quirksFor(req.Model)
	if status := q.refuse(w, req, body); status != 0 {
		answered(status)
		return
	}
	rep := f.pickReply(req)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if rep.Status >= 400 || rep.Body != "" {
		status := rep.Status
		if status == 0 {
			status = 200
		}
		answered(status)
		writeReplyError(w, rep)
		return
	}
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("chatcmpl-fake%d", f.seq)
	f.mu.Unlock()
	fillReply(&rep, req, id, q)
	answered(200)
	applyReplyHeaders(w, rep)
	if req.Stream {
		f.stream(w, r, id, now, req, rep, q)
		return
	}
	writeCompletion(w, id, now, rep, q)
}

// fillReply completes what the test left out of rep: tool call ids (unless
// the quirks say the provider sends none), the model, the finish reason and
// a usage counted in words.
func fillReply(rep *Reply, req ChatRequest, id string, q Quirks) {
	for i := range rep.ToolCalls {
		if rep.ToolCalls[i].ID == "" && !q.NoToolCallIDs {
			rep.ToolCalls[i].ID = fmt.Sprintf("call_%s_%d", strings.TrimPrefix(id, "chatcmpl-"), i)
		}
	}
	if rep.Model == "" {
		rep.Model = req.Model
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
		if len(rep.ToolCalls) > 0 {
			rep.FinishReason = "tool_calls"
		}
	}
	if rep.Usage == nil {
		u := Usage{}
		for _, m := range req.Messages {
			u.PromptTokens += wordCount(m.Content) + 4
		}
		u.CompletionTokens = wordCount(rep.Text)
		for _, tc := range rep.ToolCalls {
			u.CompletionTokens += len(tc.Arguments)/4 + 1
		}
		rep.Usage = &u
	}
}

// writeCompletion writes rep as one (non-streamed) chat.completion.
func writeCompletion(w http.ResponseWriter, id string, now time.Time, rep Reply, q Quirks) {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		msg["content"] = rep.Text
	}
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		for _, tc := range rep.ToolCalls {
			calls = append(calls, q.toolCall(tc, -1))
		}
		msg["tool_calls"] = calls
	}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	answer := map[string]any{
		"id": id, "object": "chat.completion", "created": now.Unix(), "model": rep.Model,
		"system_fingerprint": "fp_fake",
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": rep.FinishReason}},
		"usage":              usageJSON(*rep.Usage),
	}
	if q.NoUsage {
		delete(answer, "usage")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func usageJSON(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens": u.PromptTokens + u.CompletionTokens,
	}
}

// splitWords splits s into chunks that each end after a space, as token
// streams roughly do.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if r == ' ' || r == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitFragments cuts JSON arguments into small pieces as OpenAI streams them.
func splitFragments(s string, size int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := size
		if n > len(r) {
			n = len(r)
		}
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// stream writes rep as server-sent chat.completion.chunk events, cut or
// failed part-way when the reply says so.
func (f *FakeOpenAI) stream(w http.ResponseWriter, r *http.Request, id string, now time.Time, req ChatRequest, rep Reply, q Quirks) {
	if q.NoUsage {
		req.IncludeUsage = false // the server ignores stream_options
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	writeEvents(w, r, rep, streamEvents(id, now, req, rep, q))
}

// streamEvents is the chunks of a streamed reply: the role, the reasoning
// and text word by word, the tool calls, the finish and (when asked) the
// usage.
func streamEvents(id string, now time.Time, req ChatRequest, rep Reply, q Quirks) []map[string]any {
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": now.Unix(), "model": rep.Model,
			"system_fingerprint": "fp_fake",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if req.IncludeUsage {
			c["usage"] = nil
		}
		return c
	}
	var events []map[string]any
	events = append(events, chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	for _, p := range splitWords(rep.Reasoning) {
		events = append(events, chunk(map[string]any{"reasoning_content": p}, nil))
	}
	pieces := rep.Chunks
	if pieces == nil {
		pieces = splitWords(rep.Text)
	}
	for _, p := range pieces {
		events = append(events, chunk(map[string]any{"content": p}, nil))
	}
	events = append(events, toolCallEvents(rep, q, chunk)...)
	events = append(events, chunk(map[string]any{}, rep.FinishReason))
	if req.IncludeUsage {
		events = append(events, map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": now.Unix(), "model": rep.Model,
			"system_fingerprint": "fp_fake", "choices": []any{}, "usage": usageJSON(*rep.Usage),
		})
	}
	return events
}

// toolCallEvents streams the reply's tool calls: each starts with a header
// chunk (id, type, name) followed by its argument fragments; with
// InterleaveToolCalls all headers come first and the fragments of the
// calls alternate.
func toolCallEvents(rep Reply, q Quirks, chunk func(delta map[string]any, finish any) map[string]any) []map[string]any {
	type frag struct {
		index int
		text  string
	}
	frags := make([][]frag, len(rep.ToolCalls))
	for i, tc := range rep.ToolCalls {
		if q.ArgumentsAsObject {
			continue // the whole object comes in the header
		}
		for _, p := range splitFragments(tc.Arguments, 7) {
			frags[i] = append(frags[i], frag{i, p})
		}
	}
	header := func(i int) map[string]any {
		tc := rep.ToolCalls[i]
		return chunk(map[string]any{"tool_calls": []any{q.toolCall(tc, i)}}, nil)
	}
	fragment := func(fr frag) map[string]any {
		return chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": fr.index, "function": map[string]any{"arguments": fr.text},
		}}}, nil)
	}
	var events []map[string]any
	if !rep.InterleaveToolCalls {
		for i := range rep.ToolCalls {
			events = append(events, header(i))
			for _, fr := range frags[i] {
				events = append(events, fragment(fr))
			}
		}
		return events
	}
	for i := range rep.ToolCalls {
		events = append(events, header(i))
	}
	for k := 0; ; k++ {
		more := false
		for i := range frags {
			if k < len(frags[i]) {
				events = append(events, fragment(frags[i][k]))
				more = true
			}
		}
		if !more {
			return events
		}
	}
}

// writeEvents sends the events as "data:" lines and ends with [DONE],
// unless the reply cuts the connection (CutAfter), sends an error event
// (StreamErrorAfter) or the client goes away between delayed chunks.
func writeEvents(w http.ResponseWriter, r *http.Request, rep Reply, events []map[string]any) {
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	for n, ev := range events {
		if rep.CutAfter > 0 && n >= rep.CutAfter {
			dropConnection(w)
			return
		}
		if rep.StreamErrorAfter > 0 && n >= rep.StreamErrorAfter {
			msg, typ, code := rep.ErrorMessage, rep.ErrorType, rep.ErrorCode
			if msg == "" {
				msg, typ, code = defaultErrorFor(500)
			}
			b, _ := json.Marshal(map[string]any{"error": oaError{Message: msg, Type: typ, Code: strPtr(code)}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			flush()
			return
		}
		if rep.ChunkDelay > 0 && n > 0 {
			t := time.NewTimer(rep.ChunkDelay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush()
}
