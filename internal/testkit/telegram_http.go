package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// --- HTTP ----------------------------------------------------------------------

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      any             `json:"result,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *responseParams `json:"parameters,omitempty"`
}

type responseParams struct {
	RetryAfter      int   `json:"retry_after,omitempty"`
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
}

type okWithDescription struct {
	result      any
	description string
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeAPIError(w http.ResponseWriter, e *APIError) {
	resp := apiResponse{OK: false, ErrorCode: e.Code, Description: e.Description}
	if e.RetryAfter > 0 || e.MigrateTo != 0 {
		resp.Parameters = &responseParams{RetryAfter: e.RetryAfter, MigrateToChatID: e.MigrateTo}
	}
	writeJSON(w, e.Code, resp)
}

func (f *FakeTelegram) record(c Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	f.signalLocked()
}

func (f *FakeTelegram) serveHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	now := f.now()
	f.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		f.serveFile(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	method = strings.TrimPrefix(method, "test/")
	if !ok || !ok2 || method == "" || strings.Contains(method, "/") {
		writeAPIError(w, &APIError{Code: 404, Description: "Not Found"})
		return
	}
	call := Call{Method: method, Time: now}
	if token != f.token {
		call.Status, call.Description = 401, "Unauthorized"
		f.record(call)
		writeAPIError(w, &APIError{Code: 401, Description: "Unauthorized"})
		return
	}
	params, enc, perr := readParams(r)
	call.Params, call.Encoding = params, enc
	if perr != nil {
		call.Status, call.Description = perr.Code, perr.Description
		f.record(call)
		writeAPIError(w, perr)
		return
	}
	if inj := f.takeInjection(method); inj != nil {
		if inj.drop {
			f.record(call)
			dropConnection(w)
			return
		}
		call.Status, call.Description = inj.err.Code, inj.err.Description
		f.record(call)
		writeAPIError(w, inj.err)
		return
	}
	result, aerr := f.dispatch(r.Context(), method, params)
	if aerr != nil {
		if aerr.Code == 0 { // the client went away during a long poll
			return
		}
		call.Status, call.Description = aerr.Code, aerr.Description
		f.record(call)
		writeAPIError(w, aerr)
		return
	}
	call.Status = 200
	f.record(call)
	resp := apiResponse{OK: true, Result: result}
	if d, ok := result.(okWithDescription); ok {
		resp.Result, resp.Description = d.result, d.description
	}
	writeJSON(w, 200, resp)
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func (f *FakeTelegram) takeInjection(method string) *injection {
	f.mu.Lock()
	defer f.mu.Unlock()
	lm := strings.ToLower(method)
	for i, inj := range f.injections {
		if inj.method == "*" || inj.method == lm {
			inj.remaining--
			if inj.remaining <= 0 {
				f.injections = append(f.injections[:i], f.injections[i+1:]...)
			}
			return inj
		}
	}
	return nil
}

// readParams collects the request's parameters from the query string and
// a JSON, multipart or urlencoded body.
func readParams(r *http.Request) (map[string]string, string, *APIError) {
	p := map[string]string{}
	enc := "query"
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return p, enc, badRequest("can't read request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, enc, nil
	}
	ct, ctParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		enc = "json"
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return p, enc, badRequest("can't parse JSON object")
		}
		for k, raw := range m {
			raw = bytes.TrimSpace(raw)
			switch {
			case bytes.Equal(raw, []byte("null")):
			case len(raw) > 0 && raw[0] == '"':
				var s string
				_ = json.Unmarshal(raw, &s)
				p[k] = s
			default:
				p[k] = string(raw)
			}
		}
	case "multipart/form-data":
		enc = "multipart"
		mr := multipart.NewReader(bytes.NewReader(body), ctParams["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return p, enc, badRequest("can't parse multipart/form-data body")
			}
			v, err := io.ReadAll(part)
			if err != nil {
				return p, enc, badRequest("can't parse multipart/form-data body")
			}
			if part.FileName() != "" {
				p[part.FormName()] = "<file:" + part.FileName() + ">"
				p[part.FormName()+"#bytes"] = string(v)
				continue
			}
			p[part.FormName()] = string(v)
		}
	case "application/x-www-form-urlencoded", "":
		enc = "urlencoded"
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return p, enc, badRequest("can't parse urlencoded body")
		}
		for k, v := range vals {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	default:
		return p, enc, badRequest("unsupported Content-Type %q", ct)
	}
	return p, enc, nil
}

func (f *FakeTelegram) dispatch(ctx context.Context, method string, p map[string]string) (any, *APIError) {
	lm := strings.ToLower(method)
	f.mu.Lock()
	h := f.handlers[lm]
	f.mu.Unlock()
	if h != nil {
		return h(p)
	}
	switch lm {
	case "getme":
		return f.getMe(), nil
	case "getupdates":
		return f.getUpdates(ctx, p)
	case "sendmessage":
		return f.sendMessage(p)
	case "editmessagetext":
		return f.editMessage(p, "editMessageText")
	case "editmessagereplymarkup":
		return f.editMessage(p, "editMessageReplyMarkup")
	case "deletemessage":
		return f.deleteMessage(p)
	case "sendchataction":
		return f.sendChatAction(p)
	case "answercallbackquery":
		return f.answerCallbackQuery(p)
	case "setmycommands":
		return f.setMyCommands(p)
	case "getmycommands":
		return f.getMyCommands(p)
	case "deletemycommands":
		return f.deleteMyCommands(p)
	case "setwebhook":
		return f.setWebhook(p)
	case "deletewebhook":
		return f.deleteWebhook(p)
	case "getwebhookinfo":
		return f.getWebhookInfo(), nil
	case "getfile":
		return f.getFile(p)
	case "sendvoice":
		return f.sendVoice(p)
	case "sendphoto":
		return f.sendPhoto(p)
	}
	return nil, &APIError{Code: 404, Description: "Not Found"}
}
