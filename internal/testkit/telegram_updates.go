package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// --- getUpdates --------------------------------------------------------------

func (f *FakeTelegram) confirmLocked(offset int64) {
	if offset == 0 {
		return
	}
	before := len(f.queue)
	if offset > 0 {
		i := 0
		for i < len(f.queue) && f.queue[i].id < offset {
			i++
		}
		f.queue = f.queue[i:]
	} else if keep := int(-offset); keep < len(f.queue) {
		f.queue = f.queue[len(f.queue)-keep:]
	}
	if len(f.queue) != before {
		f.signalLocked()
	}
}

func (f *FakeTelegram) getUpdates(ctx context.Context, p map[string]string) (any, *APIError) {
	offset, _, aerr := intParam(p, "offset")
	if aerr != nil {
		return nil, aerr
	}
	limit, hasLimit, aerr := intParam(p, "limit")
	if aerr != nil {
		return nil, aerr
	}
	if !hasLimit || limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _, aerr := intParam(p, "timeout")
	if aerr != nil {
		return nil, aerr
	}
	var allowed map[string]bool
	if raw := p["allowed_updates"]; raw != "" {
		var list []string
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return nil, badRequest("can't parse allowed updates JSON array")
		}
		if len(list) > 0 {
			allowed = map[string]bool{}
			for _, k := range list {
				allowed[k] = true
			}
		}
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(timeout) * time.Second)
		defer t.Stop()
		timer = t.C
	}

	f.mu.Lock()
	if f.webhook.URL != "" {
		f.mu.Unlock()
		return nil, &APIError{Code: 409, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	f.pollGen++
	gen := f.pollGen
	f.signalLocked() // wakes an older poll so that it notices it was superseded
	f.confirmLocked(offset)
	for {
		if f.pollGen != gen {
			f.mu.Unlock()
			return nil, &APIError{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		}
		out := make([]json.RawMessage, 0)
		for _, u := range f.queue {
			if len(out) >= int(limit) {
				break
			}
			if allowed != nil && u.kind != "" && !allowed[u.kind] {
				continue
			}
			out = append(out, u.raw)
		}
		if len(out) > 0 || timer == nil || f.closed {
			f.mu.Unlock()
			return out, nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-timer:
			return []json.RawMessage{}, nil
		case <-f.closing:
			return []json.RawMessage{}, nil
		case <-ctx.Done():
			return nil, &APIError{} // client gone; nothing is written
		}
		f.mu.Lock()
	}
}

// --- webhooks ------------------------------------------------------------------

func validSecretToken(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIIAlnum(c) || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (f *FakeTelegram) setWebhook(p map[string]string) (any, *APIError) {
	raw := strings.TrimSpace(p["url"])
	if raw == "" {
		return f.deleteWebhook(p)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, badRequest("bad webhook: Failed to resolve host: Name or service not known")
	}
	loop := isLoopbackHost(u.Hostname())
	switch {
	case u.Scheme == "https":
		if port := u.Port(); !loop && port != "" && port != "443" && port != "80" && port != "88" && port != "8443" {
			return nil, badRequest("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443")
		}
	case u.Scheme == "http" && loop:
		// The fake accepts plain HTTP on loopback so tests can use httptest.
	default:
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	secret, hasSecret := p["secret_token"]
	if hasSecret && secret != "" && !validSecretToken(secret) {
		return nil, badRequest("secret token contains unallowed characters")
	}
	var allowed []string
	if a := p["allowed_updates"]; a != "" {
		if err := json.Unmarshal([]byte(a), &allowed); err != nil {
			return nil, badRequest("can't parse allowed updates JSON array")
		}
	}
	maxConn, _, aerr := intParam(p, "max_connections")
	if aerr != nil {
		return nil, aerr
	}
	if maxConn == 0 {
		maxConn = 40
	}
	f.stopWebhook()
	f.mu.Lock()
	defer f.mu.Unlock()
	drop := boolParam(p, "drop_pending_updates")
	if drop {
		f.queue = nil
	}
	f.webhook = WebhookState{
		URL: raw, SecretToken: secret, AllowedUpdates: allowed, MaxConnections: int(maxConn),
		IPAddress: p["ip_address"], DropPendingUpdates: drop,
	}
	f.pollGen++ // a pending long poll ends with 409
	f.hookStop = make(chan struct{})
	f.hookDone = make(chan struct{})
	go f.deliverWebhook(f.hookStop, f.hookDone)
	f.signalLocked()
	return okWithDescription{result: true, description: "Webhook was set"}, nil
}

func (f *FakeTelegram) deleteWebhook(p map[string]string) (any, *APIError) {
	f.stopWebhook()
	f.mu.Lock()
	defer f.mu.Unlock()
	if boolParam(p, "drop_pending_updates") {
		f.queue = nil
	}
	was := f.webhook.URL != ""
	f.webhook = WebhookState{}
	f.signalLocked()
	if !was {
		return okWithDescription{result: true, description: "Webhook is already deleted"}, nil
	}
	return okWithDescription{result: true, description: "Webhook was deleted"}, nil
}

func (f *FakeTelegram) stopWebhook() {
	f.mu.Lock()
	stop, done := f.hookStop, f.hookDone
	f.hookStop, f.hookDone = nil, nil
	f.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (f *FakeTelegram) getWebhookInfo() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	info := map[string]any{
		"url":                    f.webhook.URL,
		"has_custom_certificate": false,
		"pending_update_count":   len(f.queue),
	}
	if f.webhook.URL != "" {
		info["max_connections"] = f.webhook.MaxConnections
		if f.webhook.IPAddress != "" {
			info["ip_address"] = f.webhook.IPAddress
		}
		if len(f.webhook.AllowedUpdates) > 0 {
			info["allowed_updates"] = f.webhook.AllowedUpdates
		}
		if !f.webhook.LastErrorDate.IsZero() {
			info["last_error_date"] = f.webhook.LastErrorDate.Unix()
			info["last_error_message"] = f.webhook.LastErrorMessage
		}
	}
	return info
}

// deliverWebhook posts queued updates one at a time to the webhook URL
// with the secret header; an update leaves the queue when the webhook
// answers 2xx. Failures back off from 50ms to 2s.
func (f *FakeTelegram) deliverWebhook(stop, done chan struct{}) {
	defer close(done)
	backoff := time.Duration(0)
	for {
		f.mu.Lock()
		hook := f.webhook
		client := f.hookClient
		var next *queuedUpdate
		allowed := map[string]bool{}
		for _, a := range hook.AllowedUpdates {
			allowed[a] = true
		}
		for i := range f.queue {
			u := f.queue[i]
			if len(allowed) > 0 && u.kind != "" && !allowed[u.kind] {
				continue
			}
			next = &u
			break
		}
		ch := f.changed
		f.mu.Unlock()
		if next == nil {
			select {
			case <-stop:
				return
			case <-ch:
				continue
			}
		}
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		errMsg := f.postUpdate(stop, client, hook, next.raw)
		f.mu.Lock()
		if errMsg == "" {
			for i := range f.queue {
				if f.queue[i].id == next.id {
					f.queue = append(f.queue[:i], f.queue[i+1:]...)
					break
				}
			}
			f.webhook.Delivered++
			backoff = 0
		} else {
			f.webhook.LastErrorDate = f.now()
			f.webhook.LastErrorMessage = errMsg
			switch {
			case backoff == 0:
				backoff = 50 * time.Millisecond
			case backoff < 2*time.Second:
				backoff *= 2
			}
		}
		f.signalLocked()
		f.mu.Unlock()
	}
}

func (f *FakeTelegram) postUpdate(stop chan struct{}, client *http.Client, hook WebhookState, raw json.RawMessage) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(raw))
	if err != nil {
		return "Invalid webhook URL"
	}
	req.Header.Set("Content-Type", "application/json")
	if hook.SecretToken != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", hook.SecretToken)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "Connection refused"
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Sprintf("Wrong response from the webhook: %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return ""
}
