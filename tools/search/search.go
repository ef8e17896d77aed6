package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// Providers.
const (
	ProviderSearXNG    = "searxng"
	ProviderBrave      = "brave"
	ProviderTavily     = "tavily"
	ProviderDuckDuckGo = "duckduckgo"
)

// Providers lists the supported providers, the default first.
var Providers = []string{ProviderSearXNG, ProviderBrave, ProviderTavily, ProviderDuckDuckGo}

// Search types.
const (
	TypeWeb  = "web"
	TypeNews = "news"
)

// Limits of the tool's arguments and answers.
const (
	DefaultMaxResults = 5
	MaxMaxResults     = 10
	MaxQueryLen       = 400 // characters
	DefaultTimeout    = 10 * time.Second
	maxTitleLen       = 200 // characters kept of a title
	maxSnippetLen     = 400 // characters kept of a snippet
	maxBodyBytes      = 4 << 20
)

// Default base URLs, overridable with Config.BaseURL (tests, self-hosting).
const (
	DefaultSearXNGURL    = "http://localhost:8888"
	DefaultBraveURL      = "https://api.search.brave.com"
	DefaultTavilyURL     = "https://api.tavily.com"
	DefaultDuckDuckGoURL = "https://html.duckduckgo.com"
)

// Config configures the tool.
type Config struct {
	Provider   string // searxng (default), brave, tavily, duckduckgo
	BaseURL    string // the provider's base URL; empty for its default
	BraveKey   string // BRAVE_API_KEY, required by brave
	TavilyKey  string // TAVILY_API_KEY, required by tavily
	HTTPClient *http.Client
	Timeout    time.Duration // per search; default 10s
	Logger     *slog.Logger
}

// Result is one normalized search result.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	Date    string `json:"date,omitempty"` // RFC 3339 when the provider's date parses, else as given
}

// Request is one search.
type Request struct {
	Query      string
	Type       string // web (default) or news
	MaxResults int    // 1..10; 0 means 5
}

// provider is one search backend.
type provider interface {
	search(ctx context.Context, req Request) ([]Result, error)
}

// Tool is the `search` tool. It is safe for concurrent use.
type Tool struct {
	name    string
	p       provider
	timeout time.Duration
	log     *slog.Logger
}

var _ kairos.Tool = (*Tool)(nil)

// New returns the tool for cfg. It fails with kairos.EINVALID when the
// provider is unknown, its key is missing or the base URL is not http(s).
func New(cfg Config) (*Tool, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if name == "" {
		name = ProviderSearXNG
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "search", "provider", name)
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	h := httpDoer{name: name, client: client, log: log}
	var p provider
	switch name {
	case ProviderSearXNG:
		p = &searxng{h: h, base: orDefault(base, DefaultSearXNGURL)}
	case ProviderBrave:
		if cfg.BraveKey == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "search provider brave needs BRAVE_API_KEY")
		}
		p = &brave{h: h, base: orDefault(base, DefaultBraveURL), key: cfg.BraveKey}
	case ProviderTavily:
		if cfg.TavilyKey == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "search provider tavily needs TAVILY_API_KEY")
		}
		p = &tavily{h: h, base: orDefault(base, DefaultTavilyURL), key: cfg.TavilyKey}
	case ProviderDuckDuckGo:
		p = &duckduckgo{h: h, base: orDefault(base, DefaultDuckDuckGoURL)}
	default:
		return nil, kairos.Errorf(kairos.EINVALID, "unknown search provider %q (want one of %s)", cfg.Provider, strings.Join(Providers, ", "))
	}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "search base URL must be an http(s) URL")
		}
	}
	return &Tool{name: name, p: p, timeout: timeout, log: log}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Provider returns the provider's name.
func (t *Tool) Provider() string { return t.name }

// Probe checks that the provider answers: one small search through the
// provider's own request (its URL, key and headers), with the tool's
// timeout. Its error is the tool's (kairos.EUNAVAILABLE with a safe
// message: unreachable, timed out, refused, or the HTTP status). Each
// probe is a search: for a paid provider it costs one query.
//
// The probe logs nothing itself: its caller says what the failure means
// (one warning at start, not two).
func (t *Tool) Probe(ctx context.Context) error {
	_, err := t.search(context.WithValue(ctx, probeKey{}, true), Request{Query: "kairos", Type: TypeWeb, MaxResults: 1})
	return err
}

// probeKey marks a probe's context: the provider's failures are not
// logged (the prober reports them).
type probeKey struct{}

// warn logs a provider failure unless it is a probe's.
func (h httpDoer) warn(ctx context.Context, msg string, args ...any) {
	if ctx.Value(probeKey{}) == nil {
		h.log.Warn(msg, args...)
	}
}

var spec = kairos.ToolSpec{
	Name:        "search",
	Description: "Search the web for current information: facts, news, documentation.",
	Parameters: toolutil.Schema(`{
		"type": "object",
		"properties": {
			"query": {"type": "string"},
			"type": {"type": "string", "enum": ["web", "news"], "description": "default web"},
			"max_results": {"type": "integer", "minimum": 1, "maximum": 10, "description": "default 5"}
		},
		"required": ["query"],
		"additionalProperties": false
	}`),
}

// Spec implements kairos.Tool.
func (t *Tool) Spec() kairos.ToolSpec { return spec }

type args struct {
	Query      string       `json:"query"`
	Type       string       `json:"type"`
	MaxResults toolutil.Int `json:"max_results"`
}

// parseArgs validates the model's arguments.
func parseArgs(raw json.RawMessage) (Request, error) {
	var a args
	if err := toolutil.DecodeArgs(raw, &a); err != nil {
		return Request{}, err
	}
	req := Request{Query: a.Query, Type: a.Type}
	if a.MaxResults.Set {
		req.MaxResults = a.MaxResults.Value
		if req.MaxResults < 1 || req.MaxResults > MaxMaxResults {
			return Request{}, kairos.Errorf(kairos.EINVALID, "argument \"max_results\": %d is out of range 1..%d", req.MaxResults, MaxMaxResults)
		}
	}
	return req.normalize()
}

func (r Request) normalize() (Request, error) {
	r.Query = strings.TrimSpace(r.Query)
	if r.Query == "" {
		return Request{}, kairos.Errorf(kairos.EINVALID, "argument \"query\" is required")
	}
	if utf8.RuneCountInString(r.Query) > MaxQueryLen {
		return Request{}, kairos.Errorf(kairos.EINVALID, "argument \"query\" is longer than %d characters", MaxQueryLen)
	}
	if r.Type == "" {
		r.Type = TypeWeb
	}
	if err := toolutil.OneOf("type", r.Type, TypeWeb, TypeNews); err != nil {
		return Request{}, err
	}
	if r.MaxResults == 0 {
		r.MaxResults = DefaultMaxResults
	}
	if r.MaxResults < 1 || r.MaxResults > MaxMaxResults {
		return Request{}, kairos.Errorf(kairos.EINVALID, "argument \"max_results\": %d is out of range 1..%d", r.MaxResults, MaxMaxResults)
	}
	return r, nil
}

// Action implements kairos.Tool: a search reads the web and changes
// nothing, so it is never impactful.
func (t *Tool) Action(_ context.Context, inv *kairos.ToolInvocation) (kairos.ToolAction, error) {
	if _, err := parseArgs(inv.Arguments); err != nil {
		return kairos.ToolAction{}, err
	}
	return kairos.ToolAction{Name: kairos.ActionSearch, Capability: kairos.CapSearch}, nil
}

// Call implements kairos.Tool. The content is
// {"results":[{title,url,snippet,date?}…],"untrusted":true} and the result
// is tainted.
func (t *Tool) Call(ctx context.Context, inv *kairos.ToolInvocation) (*kairos.ToolResult, error) {
	req, err := parseArgs(inv.Arguments)
	if err != nil {
		return nil, err
	}
	results, err := t.search(ctx, req)
	if err != nil {
		return nil, err
	}
	return toolutil.Result(struct {
		Results   []Result `json:"results"`
		Untrusted bool     `json:"untrusted"`
	}{results, true}, true)
}

// Search runs one search and returns at most req.MaxResults normalized
// results. Provider failures are kairos.EUNAVAILABLE with a safe message.
func (t *Tool) Search(ctx context.Context, req Request) ([]Result, error) {
	req, err := req.normalize()
	if err != nil {
		return nil, err
	}
	return t.search(ctx, req)
}

func (t *Tool) search(ctx context.Context, req Request) ([]Result, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	raw, err := t.p.search(ctx, req)
	if err != nil {
		return nil, err
	}
	return clean(raw, req.MaxResults), nil
}

// clean normalizes provider results: text without markup, http(s) links
// only, no duplicates, bounded lengths, at most max.
func clean(in []Result, max int) []Result {
	out := make([]Result, 0, min(len(in), max))
	seen := make(map[string]bool, len(in))
	for _, r := range in {
		r.URL = strings.TrimSpace(r.URL)
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		if seen[r.URL] {
			continue
		}
		seen[r.URL] = true
		r.Title = truncate(plainText(r.Title), maxTitleLen)
		r.Snippet = truncate(plainText(r.Snippet), maxSnippetLen)
		r.Date = normalizeDate(r.Date)
		if r.Title == "" {
			r.Title = u.Host
		}
		out = append(out, r)
		if len(out) == max {
			break
		}
	}
	return out
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05.999999",
	time.RFC1123,
	time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 MST",
	"2006-01-02",
}

// normalizeDate turns the providers' dates into RFC 3339 (UTC when they
// carry no zone); text it cannot parse ("2 days ago") is kept as is.
func normalizeDate(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if layout == "2006-01-02" {
				return t.Format("2006-01-02")
			}
			return t.Format(time.RFC3339)
		}
	}
	return truncate(s, 64)
}

// httpDoer sends provider requests and turns failures into safe errors.
type httpDoer struct {
	name   string
	client *http.Client
	log    *slog.Logger
}

// do sends req and decodes a 2xx JSON body into v, or returns the raw body
// when v is nil.
func (h httpDoer) do(req *http.Request, v any) ([]byte, error) {
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Kairos/"+kairos.Version+")")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.transportError(req.Context(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return nil, h.transportError(req.Context(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		h.warn(req.Context(), "search provider error", "status", resp.StatusCode)
		return nil, h.statusError(resp.StatusCode)
	}
	if v == nil {
		return body, nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		h.warn(req.Context(), "search provider answer unreadable", "err", err.Error())
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider %s returned an unreadable answer", h.name)
	}
	return body, nil
}

func (h httpDoer) transportError(ctx context.Context, err error) error {
	// *url.Error prints the whole URL; log its cause only.
	var ue *url.Error
	cause := err
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	var ne net.Error
	timedOut := errors.Is(err, context.DeadlineExceeded) || (errors.As(cause, &ne) && ne.Timeout())
	h.warn(ctx, "search provider unreachable", "err", cause.Error(), "timeout", timedOut)
	if ctx.Err() == context.Canceled {
		return fmt.Errorf("search canceled: %w", context.Canceled)
	}
	if timedOut {
		return kairos.Errorf(kairos.EUNAVAILABLE, "search provider %s timed out", h.name)
	}
	return kairos.Errorf(kairos.EUNAVAILABLE, "search provider %s is unreachable", h.name)
}

func (h httpDoer) statusError(code int) error {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		if h.name == ProviderSearXNG {
			return kairos.Errorf(kairos.EUNAVAILABLE, "search provider searxng refused the JSON API (HTTP %d); enable the json format in its settings", code)
		}
		return kairos.Errorf(kairos.EUNAVAILABLE, "search provider %s refused the request (HTTP %d); check its API key", h.name, code)
	case code == http.StatusTooManyRequests:
		return kairos.Errorf(kairos.EUNAVAILABLE, "search provider %s is rate limiting (HTTP 429); try again later", h.name)
	default:
		return kairos.Errorf(kairos.EUNAVAILABLE, "search provider %s failed (HTTP %d)", h.name, code)
	}
}
