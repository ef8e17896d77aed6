package openai

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/kairos-agent/kairos"
)

// classify turns a go-openai or transport error into *kairos.ProviderError.
// parent is the caller's context: when it is done the caller gave up, and
// its error is returned (wrapped) instead, since that is no provider fault.
// ctx is the call's own context (with the configured timeout).
func (c *Client) classify(parent, ctx context.Context, op string, cp *capture, err error) error {
	var pe *kairos.ProviderError
	if errors.As(err, &pe) {
		if !strings.HasPrefix(pe.Message, op) {
			pe.Message = op + ": " + pe.Message
		}
		return pe
	}
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("openai: %s: %w", op, perr)
	}
	pe = &kairos.ProviderError{}
	var (
		apiErr *goopenai.APIError
		reqErr *goopenai.RequestError
		urlErr *url.Error
	)
	switch {
	case errors.As(err, &apiErr):
		pe.StatusCode = apiErr.HTTPStatusCode
		code, _ := apiErr.Code.(string)
		if pe.StatusCode == 0 {
			// An error event inside a stream that had started fine.
			pe.Retryable = apiErr.Type == "" || apiErr.Type == "server_error" || code == "rate_limit_exceeded" || code == "server_error"
			pe.Message = fmt.Sprintf("%s: error in stream: %s", op, c.safe(apiErr.Message))
		} else {
			pe.Retryable = retryableStatus(pe.StatusCode) && code != "insufficient_quota"
			pe.Message = fmt.Sprintf("%s: HTTP %d: %s", op, pe.StatusCode, c.safe(apiErr.Message))
		}
	case errors.As(err, &reqErr):
		pe.StatusCode = reqErr.HTTPStatusCode
		pe.Retryable = retryableStatus(pe.StatusCode)
		detail := strings.TrimSpace(string(reqErr.Body))
		if detail == "" {
			detail = http.StatusText(pe.StatusCode)
		}
		pe.Message = fmt.Sprintf("%s: HTTP %d: %s", op, pe.StatusCode, c.safe(detail))
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		pe.Retryable = true
		pe.Message = fmt.Sprintf("%s: %s: timeout", op, c.host)
	case errors.As(err, &urlErr):
		kind, retry := transportKind(urlErr.Err)
		pe.Retryable = retry
		pe.Message = fmt.Sprintf("%s: %s %s: %s", op, strings.ToUpper(urlErr.Op), hostOf(urlErr.URL), kind)
	case errors.Is(err, goopenai.ErrTooManyEmptyStreamMessages):
		pe.Retryable = true
		pe.Message = op + ": stream sent too many empty messages"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		pe.Retryable = true
		pe.Message = op + ": connection closed during the answer"
	case isDecodeError(err):
		pe.Retryable = true
		pe.Message = op + ": malformed answer"
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			pe.Retryable = true
			pe.Message = fmt.Sprintf("%s: %s: timeout", op, c.host)
			break
		}
		pe.Message = op + ": " + c.safe(err.Error())
	}
	if pe.StatusCode == 0 && cp.status >= 400 {
		pe.StatusCode = cp.status
	}
	if cp.header != nil {
		pe.RetryAfter = retryAfter(cp.header, c.now())
	}
	return pe
}

func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// transportKind names a connection failure without any URL and says
// whether retrying can help.
func transportKind(err error) (string, bool) {
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		uaErr   x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
		ne      net.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", true
	case errors.Is(err, context.Canceled):
		return "cancelled", false
	case errors.As(err, &certErr), errors.As(err, &uaErr), errors.As(err, &hostErr), errors.As(err, &invErr):
		return "TLS certificate error", false
	case errors.As(err, &recErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "TLS handshake failed (not a TLS server)", false
	case errors.As(err, &dnsErr):
		return "DNS lookup failed", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset", true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed", true
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout", true
	}
	return "connection failed", true
}

// retryAfter reads retry-after-ms (milliseconds) or Retry-After (seconds or
// an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}

// hostOf returns only the host[:port] of a URL (no user info, path or
// query), or "endpoint" when it cannot be parsed.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "endpoint"
	}
	return u.Host
}

var urlInText = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>]+`)

const maxMessage = 300

// safe prepares provider text for a ProviderError message: the API key is
// redacted, URLs are cut to scheme://host, and the text is shortened.
func (c *Client) safe(s string) string {
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	}
	s = urlInText.ReplaceAllStringFunc(s, func(m string) string {
		trail := ""
		for strings.HasSuffix(m, ".") || strings.HasSuffix(m, ",") || strings.HasSuffix(m, ")") {
			trail = m[len(m)-1:] + trail
			m = m[:len(m)-1]
		}
		u, err := url.Parse(m)
		if err != nil || u.Host == "" {
			return "[url]" + trail
		}
		return u.Scheme + "://" + u.Hostname() + trail
	})
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxMessage {
		s = string(r[:maxMessage]) + "…"
	}
	return s
}
