package search

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

// searxng uses SearXNG's JSON API: GET {base}/search?q=…&format=json.
type searxng struct {
	h    httpDoer
	base string
}

func (s *searxng) search(ctx context.Context, req Request) ([]Result, error) {
	q := url.Values{"q": {req.Query}, "format": {"json"}}
	if req.Type == TypeNews {
		q.Set("categories", "news")
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/search?"+q.Encode(), nil)
	if err != nil {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider searxng: bad request")
	}
	hr.Header.Set("Accept", "application/json")
	var body struct {
		Results []struct {
			Title         string  `json:"title"`
			URL           string  `json:"url"`
			Content       string  `json:"content"`
			PublishedDate *string `json:"publishedDate"`
		} `json:"results"`
	}
	if _, err := s.h.do(hr, &body); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(body.Results))
	for _, r := range body.Results {
		res := Result{Title: r.Title, URL: r.URL, Snippet: r.Content}
		if r.PublishedDate != nil {
			res.Date = *r.PublishedDate
		}
		out = append(out, res)
	}
	return out, nil
}

// brave uses the Brave Search API: GET {base}/res/v1/web/search or
// /res/v1/news/search with the X-Subscription-Token header.
type brave struct {
	h    httpDoer
	base string
	key  string
}

type braveResult struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Age         string `json:"age"`
	PageAge     string `json:"page_age"`
}

func (b *brave) search(ctx context.Context, req Request) ([]Result, error) {
	path := "/res/v1/web/search"
	if req.Type == TypeNews {
		path = "/res/v1/news/search"
	}
	q := url.Values{"q": {req.Query}, "count": {strconv.Itoa(req.MaxResults)}}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider brave: bad request")
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("X-Subscription-Token", b.key)
	// The web endpoint nests its results under "web"; the news endpoint
	// has them at the top level.
	var body struct {
		Web struct {
			Results []braveResult `json:"results"`
		} `json:"web"`
		Results []braveResult `json:"results"`
	}
	if _, err := b.h.do(hr, &body); err != nil {
		return nil, err
	}
	results := body.Web.Results
	if req.Type == TypeNews {
		results = body.Results
	}
	out := make([]Result, 0, len(results))
	for _, r := range results {
		date := r.PageAge
		if date == "" {
			date = r.Age
		}
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Description, Date: date})
	}
	return out, nil
}

// tavily uses Tavily's API: POST {base}/search with a JSON body.
type tavily struct {
	h    httpDoer
	base string
	key  string
}

func (t *tavily) search(ctx context.Context, req Request) ([]Result, error) {
	topic := "general"
	if req.Type == TypeNews {
		topic = "news"
	}
	payload, err := json.Marshal(map[string]any{
		"api_key":      t.key,
		"query":        req.Query,
		"topic":        topic,
		"max_results":  req.MaxResults,
		"search_depth": "basic",
	})
	if err != nil {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider tavily: bad request")
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/search", bytes.NewReader(payload))
	if err != nil {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider tavily: bad request")
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("Authorization", "Bearer "+t.key)
	var body struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
	if _, err := t.h.do(hr, &body); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(body.Results))
	for _, r := range body.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content, Date: r.PublishedDate})
	}
	return out, nil
}

// duckduckgo scrapes DuckDuckGo's HTML endpoint: GET {base}/html/?q=….
// It has no news vertical and no dates: type news searches the web.
type duckduckgo struct {
	h    httpDoer
	base string
}

func (d *duckduckgo) search(ctx context.Context, req Request) ([]Result, error) {
	q := url.Values{"q": {req.Query}}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+"/html/?"+q.Encode(), nil)
	if err != nil {
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider duckduckgo: bad request")
	}
	hr.Header.Set("Accept", "text/html")
	body, err := d.h.do(hr, nil)
	if err != nil {
		return nil, err
	}
	results := parseDuckDuckGo(body)
	if len(results) == 0 && bytes.Contains(body, []byte("anomaly")) && !strings.Contains(string(body), "result__a") {
		// DuckDuckGo answers bots it distrusts with a challenge page.
		return nil, kairos.Errorf(kairos.EUNAVAILABLE, "search provider duckduckgo refused the request (bot challenge); try again later or use another provider")
	}
	return results, nil
}
