package research

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// webSearch runs one search through the backend. Results off the allow
// list are dropped unread (and counted); the allowed ones become
// fetchable, and the best few are read at once.
func (r *run) webSearch(ctx context.Context, q string) ([]*kairos.Evidence, error) {
	results, err := r.e.cfg.Search.Search(ctx, q, webResults)
	if err != nil {
		return nil, err
	}
	var toRead []SearchResult
	for _, res := range results {
		u, err := url.Parse(res.URL)
		if err != nil || !r.webAllowed(u) {
			host := res.URL
			if err == nil {
				host = u.Hostname()
			}
			r.st.Refused = append(r.st.Refused, "a result on "+kairos.Clip(host, 80)+", which is not on research.web.allow_list")
			continue
		}
		if !slices.Contains(r.st.Fetchable, res.URL) {
			r.st.Fetchable = append(r.st.Fetchable, res.URL)
		}
		if len(toRead) < webFetches && !r.asked("fetch", res.URL) {
			toRead = append(toRead, res)
		}
	}
	var out []*kairos.Evidence
	for _, res := range toRead {
		e, err := r.fetchPage(ctx, res.URL)
		if err != nil {
			return out, err
		}
		if e == nil && len(res.Snippet) >= 40 {
			// The page could not be read: its snippet is all there is.
			e = &kairos.Evidence{Tier: kairos.TierWeb, URL: res.URL, Title: res.Title, Text: res.Snippet, Tainted: true,
				PublishedAt: parseDate(res.Date)}
		}
		if e != nil {
			if e.PublishedAt.IsZero() {
				e.PublishedAt = parseDate(res.Date)
			}
			if e.Title == "" {
				e.Title = res.Title
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// fetchPages reads the pages the Researcher asked for (already checked
// against the rules by requests) and keeps them.
func (r *run) fetchPages(ctx context.Context, urls []string) ([]*kairos.Evidence, error) {
	var out []*kairos.Evidence
	for _, u := range urls {
		if why := r.fetchRefusal(u); why != "" {
			r.st.Refused = append(r.st.Refused, fmt.Sprintf("fetch %s: %s", kairos.Clip(u, 120), why))
			continue
		}
		e, err := r.fetchPage(ctx, u)
		if err != nil {
			return out, err
		}
		if e == nil {
			continue
		}
		if kept, err := r.keep(ctx, e); err != nil {
			return out, err
		} else if kept {
			out = append(out, e)
		}
	}
	return out, nil
}

// fetchPage reads one allowed page; nil when it cannot be read (the
// failure is noted), an error only when a budget stops it.
func (r *run) fetchPage(ctx context.Context, raw string) (*kairos.Evidence, error) {
	if err := r.useTool("fetch", raw); err != nil {
		return nil, err
	}
	p, err := r.e.fetcher.get(ctx, raw, r.webAllowed, r.rp.Web.MaxPageBytes, r.e.cfg.PDFText)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.note(fmt.Sprintf("fetch %s: %v", kairos.Clip(raw, 120), err))
		return nil, nil
	}
	return &kairos.Evidence{Tier: kairos.TierWeb, URL: raw, Title: p.Title, Text: p.Text, PublishedAt: p.Published, Tainted: true}, nil
}

// kiwixFeed is kiwix-serve's full-text search answer (OpenSearch RSS,
// /search?pattern=…&format=xml).
type kiwixFeed struct {
	Items []struct {
		Title string `xml:"title"`
		Link  string `xml:"link"`
	} `xml:"channel>item"`
}

// kiwixSearch searches the ZIM archives kiwix-serve serves and reads the
// best articles. Only the kiwix-serve host is ever fetched.
func (r *run) kiwixSearch(ctx context.Context, q string) ([]*kairos.Evidence, error) {
	base, err := url.Parse(strings.TrimRight(r.rp.Offline.KiwixURL, "/") + "/")
	if err != nil {
		return nil, err
	}
	sameHost := func(u *url.URL) bool { return u.Scheme == base.Scheme && u.Host == base.Host }
	su := base.JoinPath("search")
	su.RawQuery = url.Values{"pattern": {q}, "format": {"xml"}, "pageLength": {fmt.Sprint(kiwixHits)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, su.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.e.cfg.HTTP.Do(req)
	if err != nil {
		r.note("kiwix-serve is unreachable")
		return nil, nil
	}
	defer resp.Body.Close()
	var feed kiwixFeed
	if resp.StatusCode != http.StatusOK || xml.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&feed) != nil {
		r.note(fmt.Sprintf("kiwix-serve search answered HTTP %d", resp.StatusCode))
		return nil, nil
	}
	var out []*kairos.Evidence
	for i, it := range feed.Items {
		link, err := base.Parse(it.Link)
		if err != nil || i == kiwixHits || !sameHost(link) || r.asked("fetch", link.String()) {
			continue
		}
		if err := r.useTool("fetch", link.String()); err != nil {
			return out, err
		}
		p, err := r.e.fetcher.get(ctx, link.String(), sameHost, r.rp.Offline.MaxFileBytes, nil)
		if err != nil {
			r.note(fmt.Sprintf("ZIM article %s: %v", kairos.Clip(it.Title, 80), err))
			continue
		}
		title := p.Title
		if title == "" {
			title = it.Title
		}
		out = append(out, &kairos.Evidence{Tier: kairos.TierOffline, Title: title, URL: link.String(), Text: p.Text, Tainted: true})
	}
	return out, nil
}
