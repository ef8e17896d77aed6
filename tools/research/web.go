package research

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// fetcher reads pages for the web tier and ZIM articles for the offline
// tier. Redirects are followed by hand, each hop checked again.
type fetcher struct{ client *http.Client }

// page is a fetched document's text.
type page struct {
	URL       string
	Title     string
	Text      string
	Published time.Time
}

const maxRedirects = 3

var errNotAllowed = errors.New("not on the allow list")

// get fetches rawURL when allowed says so, following at most three
// redirects that allowed accepts too, and returns its text (HTML, plain
// text, Markdown; PDF with pdf set).
func (f *fetcher) get(ctx context.Context, rawURL string, allowed func(*url.URL) bool, limit int64,
	pdf func([]byte, int) (string, error)) (*page, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("not an http(s) URL")
	}
	client := *f.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hop := 0; ; hop++ {
		if !allowed(u) {
			return nil, errNotAllowed
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("bad URL")
		}
		req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Kairos/"+kairos.Version+"; research)")
		resp, err := client.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // *url.Error prints the whole URL
			}
			return nil, fmt.Errorf("unreachable: %v", err)
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			resp.Body.Close()
			next, err := u.Parse(loc)
			if err != nil || hop == maxRedirects {
				return nil, fmt.Errorf("too many or bad redirects")
			}
			u = next
			continue
		}
		defer resp.Body.Close()
		return readPage(resp, u, limit, pdf)
	}
}

func readPage(resp *http.Response, u *url.URL, limit int64, pdf func([]byte, int) (string, error)) (*page, error) {
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	if int64(len(body)) > limit {
		body = body[:limit]
	}
	p := &page{URL: u.String()}
	if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		p.Published = lm.UTC()
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "" {
		mt = http.DetectContentType(body)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		p.Title, p.Text = htmlText(string(body))
		if at := metaDate(string(body)); !at.IsZero() {
			p.Published = at
		}
	case strings.HasPrefix(mt, "text/"):
		p.Text = string(body)
	case mt == "application/pdf" && pdf != nil:
		if p.Text, err = pdf(body, int(limit)); err != nil {
			return nil, fmt.Errorf("unreadable PDF")
		}
	default:
		return nil, fmt.Errorf("a %s is not read", mt)
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, fmt.Errorf("no text")
	}
	return p, nil
}

var (
	dropRe    = regexp.MustCompile(`(?is)<(script|style|noscript|template|svg|head)\b.*?</(script|style|noscript|template|svg|head)\s*>|<!--.*?-->`)
	kiwixBar  = regexp.MustCompile(`(?is)<span class="kiwix">.*?</span>\s*</span>`)
	titleRe   = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	h1Re      = regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`)
	blockRe   = regexp.MustCompile(`(?i)</?(p|div|br|li|ul|ol|h[1-6]|tr|table|section|article|header|footer|nav|blockquote|pre|dd|dt|figcaption|main|aside|hr)\b[^>]*>`)
	tagRe     = regexp.MustCompile(`(?s)<[^>]*>`)
	metaDates = regexp.MustCompile(`(?is)<meta\s+[^>]*(?:name|property|itemprop)\s*=\s*["'](?:date|dc\.date|article:published_time|article:modified_time|datePublished|dateModified|last-modified)["'][^>]*>`)
	contentRe = regexp.MustCompile(`(?is)content\s*=\s*["']([^"']+)["']`)
	timeTagRe = regexp.MustCompile(`(?is)<time[^>]*datetime\s*=\s*["']([^"']+)["']`)
)

// htmlText returns a page's title and its text: scripts, styles and
// markup removed, blocks on their own lines, entities decoded.
func htmlText(doc string) (title, text string) {
	if m := titleRe.FindStringSubmatch(doc); m != nil {
		title = cleanLine(tagRe.ReplaceAllString(m[1], ""))
	}
	doc = kiwixBar.ReplaceAllString(dropRe.ReplaceAllString(doc, " "), " ")
	if title == "" {
		if m := h1Re.FindStringSubmatch(doc); m != nil {
			title = cleanLine(tagRe.ReplaceAllString(m[1], ""))
		}
	}
	doc = tagRe.ReplaceAllString(blockRe.ReplaceAllString(doc, "\n"), "")
	var lines []string
	for _, l := range strings.Split(unescape(doc), "\n") {
		if l = cleanLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	return kairos.Clip(title, 300), strings.Join(lines, "\n")
}

var unescape = html.UnescapeString

func cleanLine(s string) string { return strings.Join(strings.Fields(unescape(s)), " ") }

// metaDate reads a page's own date: its meta tags, else its first <time>.
func metaDate(doc string) time.Time {
	for _, m := range metaDates.FindAllString(doc, 4) {
		if c := contentRe.FindStringSubmatch(m); c != nil {
			if at := parseDate(c[1]); !at.IsZero() {
				return at
			}
		}
	}
	if m := timeTagRe.FindStringSubmatch(doc); m != nil {
		return parseDate(m[1])
	}
	return time.Time{}
}

// parseDate reads the dates pages and search backends give.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// webAllowed is the web tier's rule for a URL: http(s), a host on
// research.web.allow_list, no credentials in it.
func (r *run) webAllowed(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.User == nil && kairos.HostAllowed(u.Hostname(), r.rp.Web.AllowList)
}

// fetchRefusal says why the Researcher may not fetch a URL ("" when it
// may): it must be one a search returned or the user wrote, on an allowed
// domain, and not read before.
func (r *run) fetchRefusal(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !r.webAllowed(u):
		return "its domain is not on research.web.allow_list"
	case !slices.Contains(r.st.Fetchable, raw):
		return "no search returned it and the user did not write it"
	case r.asked("fetch", raw):
		return "it was read already"
	}
	return ""
}
