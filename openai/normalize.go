package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// OpenAI-compatible servers do not all answer in OpenAI's shapes. The
// transport rewrites the few differences that would make go-openai fail
// to decode an answer that is otherwise fine, before go-openai reads it:
//
//   - tool-call arguments sent as a JSON object instead of a string of
//     JSON (some llama.cpp and LM Studio builds, Ollama-style adapters):
//     the object is written back as its JSON text;
//   - an error sent with status 200 (`{"error": {...}}`, as OpenRouter
//     does when an upstream provider fails after routing): the status is
//     set to the error's own code when it is an HTTP status, else 502, so
//     that it is classified like any other failure.
//
// Everything else passes through untouched.

// maxNormalizedBody bounds the body the transport reads to rewrite it.
const maxNormalizedBody = 32 << 20

// normalizeResponse rewrites resp in place when it is a chat-completions
// answer that needs it.
func normalizeResponse(req *http.Request, resp *http.Response) {
	if resp == nil || resp.Body == nil || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseNormalizer{src: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}
	case resp.StatusCode == http.StatusOK:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxNormalizedBody))
		resp.Body.Close()
		if err != nil {
			resp.Body = io.NopCloser(errReader{err})
			return
		}
		body, status := normalizeJSON(body)
		if status != 0 {
			resp.StatusCode = status
			resp.Status = strconv.Itoa(status) + " " + http.StatusText(status)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// normalizeJSON fixes one non-streamed answer. It returns the body to
// decode and, for an error answered with 200, the status to report.
func normalizeJSON(body []byte) ([]byte, int) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body, 0 // go-openai reports the malformed answer
	}
	if e, ok := top["error"]; ok && len(top["choices"]) == 0 && string(e) != "null" {
		return errorBody(e), errorStatus(e)
	}
	if !bytes.Contains(body, []byte(`"arguments"`)) {
		return body, 0
	}
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return body, 0
	}
	if !fixArguments(doc, "message") {
		return body, 0
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body, 0
	}
	return out, 0
}

// errorBody returns a body go-openai decodes as an APIError: the error
// object itself, or a string error wrapped into one.
func errorBody(e json.RawMessage) []byte {
	var s string
	if json.Unmarshal(e, &s) == nil {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": s}})
		return b
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"error": e})
	return b
}

// errorStatus is the HTTP status an error object names in its code (a
// number or numeric string from 400 to 599), else 502 Bad Gateway.
func errorStatus(e json.RawMessage) int {
	var obj struct {
		Code any `json:"code"`
	}
	if json.Unmarshal(e, &obj) == nil {
		var n int
		switch c := obj.Code.(type) {
		case float64:
			n = int(c)
		case string:
			n, _ = strconv.Atoi(c)
		}
		if n >= 400 && n <= 599 {
			return n
		}
	}
	return http.StatusBadGateway
}

// fixArguments turns non-string tool-call arguments under
// choices[].<field>.tool_calls[].function.arguments into JSON text. It
// reports whether it changed anything.
func fixArguments(doc map[string]any, field string) bool {
	changed := false
	choices, _ := doc["choices"].([]any)
	for _, c := range choices {
		cm, _ := c.(map[string]any)
		msg, _ := cm[field].(map[string]any)
		calls, _ := msg["tool_calls"].([]any)
		for _, tc := range calls {
			tcm, _ := tc.(map[string]any)
			fn, _ := tcm["function"].(map[string]any)
			if fn == nil {
				continue
			}
			switch a := fn["arguments"].(type) {
			case string:
			case nil:
				if _, present := fn["arguments"]; present && field == "message" {
					fn["arguments"] = "{}"
					changed = true
				}
			default:
				b, err := json.Marshal(a)
				if err == nil {
					fn["arguments"] = string(b)
					changed = true
				}
			}
		}
	}
	return changed
}

// sseNormalizer rewrites the `data:` lines of a stream whose tool-call
// argument fragments are objects.
type sseNormalizer struct {
	src io.Closer
	r   *bufio.Reader
	buf []byte
	err error
}

func (s *sseNormalizer) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		line, err := s.r.ReadBytes('\n')
		s.err = err
		s.buf = normalizeSSELine(line)
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func (s *sseNormalizer) Close() error { return s.src.Close() }

func normalizeSSELine(line []byte) []byte {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(rest, []byte(`"arguments"`)) {
		return line
	}
	payload := bytes.TrimSpace(rest)
	var doc map[string]any
	if json.Unmarshal(payload, &doc) != nil || !fixArguments(doc, "delta") {
		return line
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return line
	}
	return append(append([]byte("data: "), out...), '\n')
}
