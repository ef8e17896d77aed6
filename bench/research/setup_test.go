package research

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/tools/research"
)

// writeFolder writes the offline documents in their formats, with their
// modification times.
func writeFolder(t *testing.T, dir string, docs []document) {
	t.Helper()
	for _, d := range docs {
		var body []byte
		switch filepath.Ext(d.Path) {
		case ".md":
			body = []byte("# " + d.Title + "\n\n" + d.Text + "\n")
		case ".html":
			var ps strings.Builder
			for _, l := range strings.Split(d.Text, "\n") {
				ps.WriteString("<p>" + html.EscapeString(l) + "</p>")
			}
			body = []byte("<html><head><title>" + html.EscapeString(d.Title) + "</title><style>p{margin:0}</style></head><body><h1>" +
				html.EscapeString(d.Title) + "</h1>" + ps.String() + "</body></html>")
		case ".txt":
			body = []byte(d.Title + "\n" + d.Text + "\n")
		case ".pdf":
			body = testkit.MakePDF([]string{d.Title + "\n" + strings.ReplaceAll(d.Text, ". ", ".\n")})
		}
		p := filepath.Join(dir, filepath.FromSlash(d.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, d.ModTime, d.ModTime); err != nil {
			t.Fatal(err)
		}
	}
}

// web is the fake web: one server for every *.example host, requests
// counted by host and method.
type web struct {
	srv   *httptest.Server
	pages map[string]webPage
	mu    sync.Mutex
	hits  map[string]int
	write int // requests other than GET
}

func newWeb(t *testing.T, pages []webPage) *web {
	w := &web{pages: map[string]webPage{}, hits: map[string]int{}}
	for _, p := range pages {
		w.pages[p.Host+p.Path] = p
	}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.hits[r.Host]++
		if r.Method != http.MethodGet {
			w.write++
		}
		w.mu.Unlock()
		p, ok := w.pages[r.Host+r.URL.Path]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		meta := ""
		if p.Date != "" {
			meta = `<meta name="date" content="` + p.Date + `">`
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, "<html><head><title>%s</title>%s<script>track('%s')</script></head><body>%s</body></html>",
			html.EscapeString(p.Title), meta, p.Host, p.Body)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *web) counts() (offList, writes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[hostOffList], w.write
}

// client dials *.example at the fake web and everything else (the
// kiwix-serve on loopback) as usual.
func (w *web) client() *http.Client {
	addr := w.srv.Listener.Addr().String()
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(a); strings.HasSuffix(host, ".example") {
			a = addr
		}
		return d.DialContext(ctx, network, a)
	}}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// searcher is the fake search backend: a page is a result when one of
// its keys is in the query; off-list and hostile pages come first, old
// ones before new, as an unhelpful engine would rank them.
type searcher struct {
	pages []webPage
	mu    sync.Mutex
	calls int
}

func (s *searcher) Search(_ context.Context, q string, max int) ([]research.SearchResult, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	lq := strings.ToLower(q)
	var hits []webPage
	for _, p := range s.pages {
		for _, k := range p.Keys {
			if strings.Contains(lq, k) {
				hits = append(hits, p)
				break
			}
		}
	}
	rank := func(p webPage) int {
		switch {
		case p.Host == hostOffList:
			return 0
		case p.Host == hostForum:
			return 1
		case strings.HasPrefix(p.Path, "/archive/"):
			return 2
		}
		return 3
	}
	sort.SliceStable(hits, func(i, j int) bool { return rank(hits[i]) < rank(hits[j]) })
	var out []research.SearchResult
	for _, p := range hits {
		if len(out) == max {
			break
		}
		out = append(out, research.SearchResult{Title: p.Title, URL: "http://" + p.Host + p.Path, Date: p.Date,
			Snippet: "A page about " + p.Title + "."})
	}
	return out, nil
}

func (s *searcher) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// kiwix builds the ZIM archive with zimwriterfs and serves it with
// kiwix-serve; "" when the Debian packages are not installed.
func kiwix(t *testing.T, articles []document) string {
	t.Helper()
	writer, err1 := exec.LookPath("zimwriterfs")
	serve, err2 := exec.LookPath("kiwix-serve")
	if err1 != nil || err2 != nil {
		t.Log("zimwriterfs or kiwix-serve not found (apt-get install kiwix-tools zim-tools): the ZIM questions are skipped")
		return ""
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "html")
	os.MkdirAll(src, 0o755)
	index := "<html><head><title>Lighthouses</title></head><body><h1>Lighthouses</h1><ul>"
	for _, a := range articles {
		os.WriteFile(filepath.Join(src, a.Path), []byte("<html><head><meta charset=\"utf-8\"><title>"+a.Title+"</title></head><body>"+a.Text+"</body></html>"), 0o644)
		index += `<li><a href="` + a.Path + `">` + a.Title + `</a></li>`
	}
	os.WriteFile(filepath.Join(src, "index.html"), []byte(index+"</ul></body></html>"), 0o644)
	var icon bytes.Buffer
	png.Encode(&icon, image.NewGray(image.Rect(0, 0, 48, 48)))
	os.WriteFile(filepath.Join(src, "icon.png"), icon.Bytes(), 0o644)
	zim := filepath.Join(dir, "lighthouses.zim")
	out, err := exec.Command(writer, "--welcome=index.html", "--illustration=icon.png", "--language=eng", "--title=Lighthouses",
		"--description=Test lighthouses", "--creator=Kairos", "--publisher=Kairos", "--name=lighthouses", src, zim).CombinedOutput()
	if err != nil {
		t.Fatalf("zimwriterfs: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(serve, "--nosearchbar", "--address=127.0.0.1", fmt.Sprintf("--port=%d", port), zim)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if testkit.Poll(testkit.Deadline(t), func() bool {
		var resp *http.Response
		if resp, err = http.Get(base + "/search?pattern=lighthouse&format=xml"); err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
			return false
		}
		return true
	}) != nil {
		t.Fatalf("kiwix-serve did not answer: %v", err)
	}
	return base
}

var tagRe = regexp.MustCompile(`<[^>]*>`)

// plain is a text as the benchmark compares quotes: tags dropped, white
// space collapsed, typographic marks plain.
func plain(s string) string {
	s = html.UnescapeString(tagRe.ReplaceAllString(s, " "))
	s = strings.NewReplacer("’", "'", "“", `"`, "”", `"`, "–", "-", "—", "-", "**", "").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
