package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// APIError is a Bot API failure. Its text never contains the token.
type APIError struct {
	Method      string
	Code        int // error_code, or 0 when no answer arrived
	Description string
	RetryAfter  time.Duration // from parameters.retry_after on 429
}

func (e *APIError) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("telegram %s: %s", e.Method, e.Description)
	}
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// Temporary reports whether a retry may succeed.
func (e *APIError) Temporary() bool { return e.Code == 0 || e.Code == 429 || e.Code >= 500 }

// retryWait is the one backoff rule of every Telegram call tried again
// (getMe at start, getUpdates, sends and edits): after err, Telegram's
// retry_after when it gives one, else the previous wait doubled, from
// floor up to ceiling.
func retryWait(err error, prev, floor, ceiling time.Duration) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return ae.RetryAfter
	}
	return min(max(prev*2, floor), ceiling)
}

// client calls the Bot API with JSON bodies.
type client struct {
	base  string // e.g. https://api.telegram.org
	token string
	http  *http.Client
}

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call invokes method with params (JSON-encoded) and decodes the result
// into out (when not nil).
func (c *client) call(ctx context.Context, method string, params any, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: encode: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return &APIError{Method: method, Description: "bad request URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return &APIError{Method: method, Description: describeTransport(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return &APIError{Method: method, Description: "reading the answer: " + describeTransport(err)}
	}
	var r apiResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return &APIError{Method: method, Code: resp.StatusCode, Description: "malformed answer from the Bot API"}
	}
	if !r.OK {
		e := &APIError{Method: method, Code: r.ErrorCode, Description: r.Description}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if r.Parameters != nil && r.Parameters.RetryAfter > 0 {
			e.RetryAfter = time.Duration(r.Parameters.RetryAfter) * time.Second
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return &APIError{Method: method, Code: resp.StatusCode, Description: "unexpected result shape"}
		}
	}
	return nil
}

// describeTransport describes a transport failure without the URL (which
// holds the bot token): Go's *url.Error prints the whole URL.
func describeTransport(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	msg := err.Error()
	if i := strings.Index(msg, "/bot"); i >= 0 {
		msg = msg[:i] + "/bot<token>"
	}
	return msg
}
