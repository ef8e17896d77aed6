package search

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain  text\n here", "plain text here"},
		{"<strong>Go</strong> &amp; <em>generics</em>", "Go & generics"},
		{"a<br>b<br/>c", "a b c"},
		{"1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"<script>alert('x')</script>after", "after"},
		{"<!-- hidden -->shown", "shown"},
		{"&lt;b&gt; stays text", "<b> stays text"},
		{"unterminated <a href=\"x", "unterminated"},
	}
	for _, tc := range tests {
		if got := plainText(tc.in); got != tc.want {
			t.Errorf("plainText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUnwrapDuckDuckGo(t *testing.T) {
	tests := []struct{ in, want string }{
		{"//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2F&rut=abc", "https://go.dev/"},
		{"/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3Dc", "https://example.com/a?b=c"},
		{"https://example.com/direct", "https://example.com/direct"},
		{"https://duckduckgo.com/y.js?ad_domain=x", "https://duckduckgo.com/y.js?ad_domain=x"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := unwrapDuckDuckGo(tc.in); got != tc.want {
			t.Errorf("unwrapDuckDuckGo(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeDate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2026-03-01T09:30:00", "2026-03-01T09:30:00Z"},
		{"2026-03-01 09:30:00", "2026-03-01T09:30:00Z"},
		{"2026-03-01T09:30:00+02:00", "2026-03-01T09:30:00+02:00"},
		{"Mon, 02 Feb 2026 10:00:00 GMT", "2026-02-02T10:00:00Z"},
		{"2026-03-01", "2026-03-01"},
		{"2 days ago", "2 days ago"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := normalizeDate(tc.in); got != tc.want {
			t.Errorf("normalizeDate(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseDuckDuckGo(f *testing.F) {
	page, err := os.ReadFile("testdata/duckduckgo.html")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(page))
	f.Add(`<a class="result__a" href="//duckduckgo.com/l/?uddg=%zz">x`)
	f.Add(`<a class=result__a href=https://x.example/>t</a><td class="result__snippet"><td>nested</td></td>`)
	f.Add(`<scr<script>ipt>`)
	f.Add(`<a class="result__a" href='`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range parseDuckDuckGo([]byte(s)) {
			if r.URL == "" {
				t.Fatalf("result without URL from %q", s)
			}
		}
		if out := plainText(s); utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("plainText made invalid UTF-8 from %q", s)
		}
		if out := clean([]Result{{Title: s, URL: "https://x.example/" + s, Snippet: s}}, 1); len(out) == 1 && strings.Contains(out[0].Title, "\n") {
			t.Fatalf("title keeps a newline: %q", out[0].Title)
		}
	})
}
