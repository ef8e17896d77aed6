package search

import (
	"html"
	"net/url"
	"strings"
)

// A small, forgiving HTML tokenizer: enough to read DuckDuckGo's result
// page and to strip markup from snippets, without a dependency. It never
// fails; malformed markup degrades to text.

type tokenKind int

const (
	textToken tokenKind = iota
	startTag
	endTag
	selfClosingTag
)

type token struct {
	kind  tokenKind
	name  string // lower-case tag name
	attrs map[string]string
	text  string // unescaped text
}

type tokenizer struct {
	s   string
	pos int
	raw string // inside <script> or <style>: skip to its end tag
}

func (z *tokenizer) next() (token, bool) {
	for z.pos < len(z.s) {
		if z.raw != "" {
			end := indexFold(z.s[z.pos:], "</"+z.raw)
			z.raw = ""
			if end < 0 {
				z.pos = len(z.s)
				return token{}, false
			}
			z.pos += end
			continue
		}
		if z.s[z.pos] != '<' {
			end := strings.IndexByte(z.s[z.pos:], '<')
			if end < 0 {
				end = len(z.s) - z.pos
			}
			t := z.s[z.pos : z.pos+end]
			z.pos += end
			return token{kind: textToken, text: html.UnescapeString(t)}, true
		}
		rest := z.s[z.pos:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				z.pos = len(z.s)
			} else {
				z.pos += 4 + end + 3
			}
			continue
		case strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				z.pos = len(z.s)
			} else {
				z.pos += end + 1
			}
			continue
		}
		if tok, n, ok := parseTag(rest); ok {
			z.pos += n
			if tok.kind == startTag && (tok.name == "script" || tok.name == "style") {
				z.raw = tok.name
			}
			return tok, true
		}
		// A lone '<' is text.
		z.pos++
		return token{kind: textToken, text: "<"}, true
	}
	return token{}, false
}

func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c == ':' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// parseTag reads a tag at the start of s ("<a href=…>" or "</a>") and
// returns it with the number of bytes it spans.
func parseTag(s string) (token, int, bool) {
	i := 1
	tok := token{kind: startTag}
	if i < len(s) && s[i] == '/' {
		tok.kind = endTag
		i++
	}
	start := i
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	if i == start || !((s[start] >= 'a' && s[start] <= 'z') || (s[start] >= 'A' && s[start] <= 'Z')) {
		return token{}, 0, false
	}
	tok.name = strings.ToLower(s[start:i])
	for {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			if s[i] == '/' && i+1 < len(s) && s[i+1] == '>' && tok.kind == startTag {
				tok.kind = selfClosingTag
			}
			i++
		}
		if i >= len(s) {
			return tok, i, true
		}
		if s[i] == '>' {
			return tok, i + 1, true
		}
		// An attribute name.
		ns := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/' {
			i++
		}
		name := strings.ToLower(s[ns:i])
		if name == "" { // a stray '=' or similar
			i++
			continue
		}
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				end := strings.IndexByte(s[i+1:], q)
				if end < 0 {
					val = s[i+1:]
					i = len(s)
				} else {
					val = s[i+1 : i+1+end]
					i += end + 2
				}
			} else {
				vs := i
				for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
					i++
				}
				val = s[vs:i]
			}
		}
		if tok.attrs == nil {
			tok.attrs = make(map[string]string)
		}
		if _, dup := tok.attrs[name]; !dup {
			tok.attrs[name] = html.UnescapeString(val)
		}
	}
}

func hasClass(t token, class string) bool {
	for _, c := range strings.Fields(t.attrs["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

// plainText strips tags from a fragment, unescapes entities and collapses
// white space.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.Join(strings.Fields(s), " ")
	}
	var b strings.Builder
	z := tokenizer{s: s}
	for {
		t, ok := z.next()
		if !ok {
			break
		}
		switch t.kind {
		case textToken:
			b.WriteString(t.text)
		case startTag, endTag, selfClosingTag:
			if t.name == "br" || t.name == "p" || t.name == "div" || t.name == "li" {
				b.WriteByte(' ')
			}
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// parseDuckDuckGo reads the result page of html.duckduckgo.com: each
// result has an <a class="result__a" href=…>title</a>, an element of class
// result__snippet, and an <a class="result__url">host/path</a>. Links go
// through DuckDuckGo's redirect (//duckduckgo.com/l/?uddg=<target>), which
// is unwrapped; ads (links to duckduckgo.com/y.js) are skipped.
func parseDuckDuckGo(page []byte) []Result {
	z := tokenizer{s: string(page)}
	var (
		out     []Result
		cur     *Result
		capture string // "title", "snippet", "url" or ""
		capTag  string
		depth   int
		buf     strings.Builder
	)
	flush := func() {
		text := strings.Join(strings.Fields(buf.String()), " ")
		buf.Reset()
		if cur == nil {
			return
		}
		switch capture {
		case "title":
			cur.Title = text
		case "snippet":
			cur.Snippet = text
		case "url":
			if cur.URL == "" && text != "" {
				if !strings.Contains(text, "://") {
					text = "https://" + text
				}
				cur.URL = text
			}
		}
	}
	for {
		t, ok := z.next()
		if !ok {
			break
		}
		if capture != "" {
			switch {
			case t.kind == textToken:
				buf.WriteString(t.text)
			case t.kind == startTag && t.name == capTag:
				depth++
			case t.kind == endTag && t.name == capTag:
				depth--
				if depth == 0 {
					flush()
					capture = ""
				}
			}
			continue
		}
		if t.kind != startTag {
			continue
		}
		switch {
		case t.name == "a" && hasClass(t, "result__a"):
			out = appendResult(out, cur)
			cur = &Result{URL: unwrapDuckDuckGo(t.attrs["href"])}
			capture, capTag, depth = "title", t.name, 1
		case cur != nil && hasClass(t, "result__snippet"):
			capture, capTag, depth = "snippet", t.name, 1
		case cur != nil && t.name == "a" && hasClass(t, "result__url"):
			if cur.URL == "" {
				cur.URL = unwrapDuckDuckGo(t.attrs["href"])
			}
			capture, capTag, depth = "url", t.name, 1
		}
	}
	if capture != "" {
		flush()
	}
	return appendResult(out, cur)
}

func appendResult(out []Result, r *Result) []Result {
	if r == nil || r.URL == "" {
		return out
	}
	if u, err := url.Parse(r.URL); err == nil && isDuckDuckGoHost(u.Host) {
		return out // an ad or an internal link
	}
	return append(out, *r)
}

func isDuckDuckGoHost(h string) bool {
	h = strings.ToLower(h)
	return h == "duckduckgo.com" || strings.HasSuffix(h, ".duckduckgo.com")
}

// unwrapDuckDuckGo returns the target of a DuckDuckGo redirect link
// (//duckduckgo.com/l/?uddg=<escaped target>&rut=…), or href itself with a
// scheme when it is a direct link.
func unwrapDuckDuckGo(href string) string {
	href = strings.TrimSpace(href)
	if href == "" {
		return ""
	}
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	} else if strings.HasPrefix(href, "/") {
		href = "https://duckduckgo.com" + href
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if isDuckDuckGoHost(u.Host) && strings.HasPrefix(u.Path, "/l/") {
		if target := u.Query().Get("uddg"); target != "" {
			return target
		}
	}
	return href
}
