package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// blockedHosts lists the domains of the built-in blocked categories (seed
// 004: banking and brokerage, payment processors, crypto exchanges,
// login/account flows). A host is blocked when it equals an entry or is a
// subdomain of it. The lists are deliberately short and well known; the
// path rule below and the allow-list carry the rest.
var blockedHosts = map[string][]string{
	"banking": {
		"chase.com", "bankofamerica.com", "wellsfargo.com", "citi.com", "citibank.com",
		"hsbc.com", "hsbc.co.uk", "barclays.com", "barclays.co.uk", "santander.com",
		"santander.co.uk", "lloydsbank.com", "natwest.com", "rbs.co.uk", "usbank.com",
		"capitalone.com", "pnc.com", "td.com", "rbc.com", "bnpparibas.com", "db.com",
		"ing.com", "commerzbank.de", "sparkasse.de", "revolut.com", "monzo.com", "n26.com",
		"schwab.com", "fidelity.com", "vanguard.com", "etrade.com", "robinhood.com",
		"interactivebrokers.com", "tdameritrade.com", "ally.com", "discover.com",
		"americanexpress.com", "irs.gov", "hmrc.gov.uk",
	},
	"payments": {
		"paypal.com", "paypal.me", "stripe.com", "squareup.com", "square.com", "venmo.com",
		"braintreegateway.com", "adyen.com", "klarna.com", "checkout.com", "paddle.com",
		"wise.com", "transferwise.com", "alipay.com", "pay.google.com", "payoneer.com",
		"skrill.com", "worldpay.com", "authorize.net", "2checkout.com", "zelle.com",
		"cash.app", "westernunion.com", "moneygram.com",
	},
	"crypto_exchanges": {
		"coinbase.com", "binance.com", "binance.us", "kraken.com", "bitstamp.net",
		"gemini.com", "kucoin.com", "okx.com", "bybit.com", "bitfinex.com", "crypto.com",
		"huobi.com", "htx.com", "gate.io", "bitget.com", "mexc.com", "bittrex.com",
		"poloniex.com", "bitmex.com", "uniswap.org", "pancakeswap.finance",
	},
	"login_flows": {
		"accounts.google.com", "login.microsoftonline.com", "login.live.com",
		"appleid.apple.com", "auth0.com", "okta.com", "onelogin.com",
		"login.yahoo.com", "id.atlassian.com", "github.com/login",
	},
}

// loginLabels are leftmost host labels that mark login hosts
// (login.example.com, sso.example.com, …).
var loginLabels = []string{"login", "signin", "sso", "auth", "accounts", "account", "id", "oauth", "idp"}

// loginSegments are URL path segments that mark login and account flows.
var loginSegments = []string{
	"login", "logon", "signin", "sign-in", "sign_in", "signup", "sign-up", "sign_up",
	"register", "oauth", "oauth2", "auth", "authorize", "authorization", "sso", "saml",
	"password", "reset-password", "forgot-password", "2fa", "mfa", "logout", "signout",
}

// blockedCategory returns the blocked category u falls into, "" if none.
// The built-in categories always apply; extra entries of
// NetworkGrant.BlockedCategories that look like host names (contain a dot)
// are blocked as hosts of the category "policy".
func blockedCategory(u *url.URL, extra []string) string {
	host := normHost(u.Hostname())
	for cat, hosts := range blockedHosts {
		for _, h := range hosts {
			if p, ok := strings.CutSuffix(h, "/login"); ok {
				if hostMatches(host, p) && hasSegment(u.Path, "login") {
					return cat
				}
				continue
			}
			if hostMatches(host, h) {
				return cat
			}
		}
	}
	for _, e := range extra {
		if strings.Contains(e, ".") && hostMatches(host, normHost(strings.TrimPrefix(e, "*."))) {
			return "policy"
		}
	}
	if first, _, ok := strings.Cut(host, "."); ok && slices.Contains(loginLabels, first) && net.ParseIP(host) == nil {
		return "login_flows"
	}
	for _, seg := range strings.Split(strings.ToLower(u.EscapedPath()), "/") {
		seg, _ = url.PathUnescape(seg)
		if slices.Contains(loginSegments, seg) {
			return "login_flows"
		}
	}
	return ""
}

func hasSegment(path, seg string) bool {
	for _, s := range strings.Split(strings.ToLower(path), "/") {
		if s == seg {
			return true
		}
	}
	return false
}

// hostMatches reports whether host is domain or one of its subdomains.
func hostMatches(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// checkURL applies the network policy to one URL: allow-list first, then
// the blocked categories.
func checkURL(u *url.URL, grant *kairos.NetworkGrant) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return jsErr("NetworkError", "scheme %q is not allowed (http and https only)", u.Scheme)
	}
	if u.User != nil {
		return jsErr("NetworkError", "credentials in URLs are refused (login flows are blocked)")
	}
	if u.Hostname() == "" {
		return jsErr("NetworkError", "URL has no host")
	}
	if !kairos.HostAllowed(u.Hostname(), grant.AllowHosts) {
		return jsErr("NetworkError", "host %s is not on the network allow-list", kairos.Clip(u.Hostname(), 100))
	}
	if cat := blockedCategory(u, grant.BlockedCategories); cat != "" {
		return jsErr("NetworkError", "%s is in the blocked category %s", kairos.Clip(u.Hostname(), 100), cat)
	}
	return nil
}

type fetchRequest struct {
	URL        string            `json:"url"`
	Method     string            `json:"method"`
	Headers    map[string]string `json:"headers"`
	Body       *string           `json:"body"`
	AuthSecret string            `json:"authSecret"`
}

type fetchResponse struct {
	Status     int               `json:"status"`
	StatusText string            `json:"statusText"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

// fetch performs one HTTP request for the cell under the network grant and
// the budgets. Policy refusals and transport failures are NetworkErrors the
// cell may catch; exceeding a budget stops the cell.
func (c *cell) fetch(r *fetchRequest) (any, error) {
	grant := &c.task.Network
	if !grant.Enabled {
		return nil, jsErr("NetworkError", "network is disabled")
	}
	u, err := url.Parse(c.unseal(r.URL))
	if err != nil {
		return nil, jsErr("NetworkError", "bad URL")
	}
	if err := checkURL(u, grant); err != nil {
		return nil, err
	}
	method, err := allowedMethod(r.Method, grant.Methods)
	if err != nil {
		return nil, err
	}
	var body []byte
	if r.Body != nil {
		body = []byte(c.unseal(*r.Body))
	}
	readRoom, err := c.reserve(int64(len(body)))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(c.ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, jsErr("NetworkError", "bad request")
	}
	for k, v := range r.Headers {
		if strings.EqualFold(k, "host") || strings.EqualFold(k, "cookie") {
			continue
		}
		req.Header.Set(k, c.unseal(v))
	}
	if r.AuthSecret != "" {
		v, ok := c.task.Secrets[r.AuthSecret]
		if !ok {
			return nil, jsErr("ReferenceError", "secret %q not found", kairos.Clip(r.AuthSecret, 64))
		}
		req.Header.Set("Authorization", "Bearer "+v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if c.stopped() {
			return nil, errStopped
		}
		var pe *policyError
		if errors.As(err, &pe) {
			return nil, pe.err
		}
		return nil, jsErr("NetworkError", "request to %s failed", kairos.Clip(u.Hostname(), 100))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, readRoom+1))
	c.mu.Lock()
	c.bytesRead += int64(len(data))
	overRead := c.bytesRead > c.budget.MaxBytesRead
	c.mu.Unlock()
	if overRead {
		c.stop(kairos.CatBudget, fmt.Sprintf("bytes-read budget of %d reached", c.budget.MaxBytesRead))
		return nil, errStopped
	}
	if err != nil {
		if c.stopped() {
			return nil, errStopped
		}
		return nil, jsErr("NetworkError", "reading the response of %s failed", kairos.Clip(u.Hostname(), 100))
	}
	return c.response(resp, data), nil
}

// allowedMethod is the request's method (GET when empty) if the grant
// allows it (GET only when it lists none).
func allowedMethod(method string, allowed []string) (string, error) {
	method = strings.ToUpper(method)
	if method == "" {
		method = http.MethodGet
	}
	if len(allowed) == 0 {
		allowed = []string{http.MethodGet}
	}
	if !slices.ContainsFunc(allowed, func(m string) bool { return strings.EqualFold(m, method) }) {
		return "", jsErr("NetworkError", "method %s is not allowed (allowed: %s)", kairos.Clip(method, 16), strings.Join(allowed, ", "))
	}
	return method, nil
}

// reserve counts one network call and n bytes written against the
// budgets (stopping the cell when one is spent) and returns how many
// bytes the response may still read.
func (c *cell) reserve(n int64) (int64, error) {
	c.mu.Lock()
	c.networkCalls++
	overCalls := c.networkCalls > c.budget.MaxNetworkCalls
	overBytes := c.bytesWritten+n > c.budget.MaxBytesWritten
	if !overCalls && !overBytes {
		c.bytesWritten += n
	}
	readRoom := c.budget.MaxBytesRead - c.bytesRead
	c.mu.Unlock()
	if overCalls {
		c.stop(kairos.CatBudget, fmt.Sprintf("network call budget of %d reached", c.budget.MaxNetworkCalls))
		return 0, errStopped
	}
	if overBytes {
		c.stop(kairos.CatBudget, fmt.Sprintf("bytes-written budget of %d reached", c.budget.MaxBytesWritten))
		return 0, errStopped
	}
	return readRoom, nil
}

// response is what the cell sees of resp and its body.
func (c *cell) response(resp *http.Response, data []byte) *fetchResponse {
	// Nothing that comes back may carry a secret's value into the cell
	// (an echoing endpoint would otherwise unseal it).
	out := &fetchResponse{
		Status:     resp.StatusCode,
		StatusText: http.StatusText(resp.StatusCode),
		URL:        c.red.Scrub(resp.Request.URL.String()),
		Headers:    map[string]string{},
		Body:       c.red.Scrub(string(data)),
	}
	for k, v := range resp.Header {
		if strings.EqualFold(k, "Set-Cookie") {
			continue
		}
		out.Headers[strings.ToLower(k)] = c.red.Scrub(strings.Join(v, ", "))
	}
	return out
}

// policyError carries a policy refusal out of CheckRedirect.
type policyError struct{ err error }

func (e *policyError) Error() string { return e.err.Error() }

// cellClient returns a copy of base whose redirects are held to the same
// policy as the first request.
func cellClient(base *http.Client, grant *kairos.NetworkGrant) *http.Client {
	c := *base
	c.Jar = nil
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return &policyError{jsErr("NetworkError", "too many redirects")}
		}
		if err := checkURL(req.URL, grant); err != nil {
			return &policyError{err}
		}
		return nil
	}
	return &c
}
