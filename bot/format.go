package bot

import (
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxMessageUnits is Telegram's limit on a message's text, in UTF-16 code
// units of the text after entity parsing.
const MaxMessageUnits = 4096

// RenderHTML converts the model's Markdown into Telegram HTML. Every
// character that HTML gives meaning to is escaped; Markdown that does not
// balance (a lone * or _) stays literal text. Supported: fenced and inline
// code, **bold**, __bold__, *italic*, _italic_, ~~strike~~, [links](url),
// headings (bold) and > quotes.
func RenderHTML(md string) string {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, lang, ok := openFence(line); ok {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != fence {
				j++
			}
			body := strings.Join(lines[i+1:min(j, len(lines))], "\n")
			if lang != "" {
				b.WriteString(`<pre><code class="language-` + html.EscapeString(lang) + `">` + escape(body) + "</code></pre>")
			} else {
				b.WriteString("<pre>" + escape(body) + "</pre>")
			}
			i = j
			if i < len(lines)-1 {
				b.WriteByte('\n')
			}
			continue
		}
		trim := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trim, "#"):
			h := strings.TrimLeft(trim, "#")
			if strings.HasPrefix(h, " ") {
				b.WriteString("<b>" + inline(strings.TrimSpace(h)) + "</b>")
			} else {
				b.WriteString(inline(line))
			}
		case strings.HasPrefix(trim, "> ") || trim == ">":
			var q []string
			for i < len(lines) {
				t := strings.TrimLeft(lines[i], " ")
				if !strings.HasPrefix(t, ">") {
					break
				}
				q = append(q, inline(strings.TrimPrefix(strings.TrimPrefix(t, ">"), " ")))
				i++
			}
			i--
			b.WriteString("<blockquote>" + strings.Join(q, "\n") + "</blockquote>")
		case strings.HasPrefix(trim, "- ") || strings.HasPrefix(trim, "* ") || strings.HasPrefix(trim, "+ "):
			b.WriteString(line[:len(line)-len(trim)] + "• " + inline(trim[2:]))
		default:
			b.WriteString(inline(line))
		}
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func openFence(line string) (fence, lang string, ok bool) {
	t := strings.TrimSpace(line)
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			lang = strings.TrimSpace(strings.TrimPrefix(t, f))
			if strings.ContainsAny(lang, "`~ <>\"'&") {
				lang = ""
			}
			return f, lang, true
		}
	}
	return "", "", false
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escape(s string) string { return htmlEscaper.Replace(s) }

// inline renders one line's inline Markdown.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#>+-.!|{}", s[i+1]) >= 0:
			b.WriteString(escape(s[i+1 : i+2]))
			i += 2
			continue
		case c == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
				b.WriteString("<code>" + escape(s[i+1:i+1+j]) + "</code>")
				i += j + 2
				continue
			}
		case c == '[':
			if text, url, n, ok := link(s[i:]); ok {
				b.WriteString(`<a href="` + html.EscapeString(url) + `">` + inline(text) + "</a>")
				i += n
				continue
			}
		case (c == 'h' || c == 'H') && (i == 0 || !isWordByte(s[i-1])):
			if n := bareURL(s[i:]); n > 0 {
				b.WriteString(escape(s[i : i+n]))
				i += n
				continue
			}
		case c == '_' && i > 0 && isWordByte(s[i-1]):
			// An underscore inside a word never opens emphasis (CommonMark):
			// snake_case, file names and tokens in links stay as written.
		case c == '*' || c == '_' || c == '~':
			if tag, inner, n, ok := emphasis(s[i:]); ok {
				b.WriteString("<" + tag + ">" + inline(inner) + "</" + tag + ">")
				i += n
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(escape(s[i : i+n]))
		}
		i += n
	}
	return b.String()
}

// emphasis matches **x**, __x__, ~~x~~, *x* or _x_ at the start of s.
func emphasis(s string) (tag, inner string, n int, ok bool) {
	for _, d := range []struct{ delim, tag string }{{"**", "b"}, {"__", "b"}, {"~~", "s"}, {"*", "i"}, {"_", "i"}} {
		if !strings.HasPrefix(s, d.delim) {
			continue
		}
		rest := s[len(d.delim):]
		if rest == "" || rest[0] == ' ' {
			return "", "", 0, false
		}
		j := strings.Index(rest, d.delim)
		for j >= 0 && (j == 0 || rest[j-1] == ' ' || (len(d.delim) == 1 && j+1 < len(rest) && rest[j+1] == d.delim[0])) {
			k := strings.Index(rest[j+len(d.delim):], d.delim)
			if k < 0 {
				j = -1
				break
			}
			j += len(d.delim) + k
		}
		if j <= 0 {
			continue
		}
		// snake_case words are not italics.
		if d.delim == "_" && j+1 < len(rest) && isWordByte(rest[j+1]) {
			continue
		}
		return d.tag, rest[:j], len(d.delim)*2 + j, true
	}
	return "", "", 0, false
}

// bareURL is the length of an http(s) URL at the start of s, up to the
// next space, without the sentence punctuation that usually follows one; 0
// when s does not start with one. Telegram links it by itself, so it is
// copied as written: Markdown inside a URL (a token's "_x_" or "__") is not
// emphasis.
func bareURL(s string) int {
	l := strings.ToLower(s[:min(len(s), 8)])
	scheme := len("https://")
	if !strings.HasPrefix(l, "https://") {
		if scheme = len("http://"); !strings.HasPrefix(l, "http://") {
			return 0
		}
	}
	n := strings.IndexAny(s, " \t<>\"")
	if n < 0 {
		n = len(s)
	}
	for n > 0 && strings.IndexByte(".,;:!?'*)]", s[n-1]) >= 0 {
		if s[n-1] == ')' && strings.Count(s[:n], "(") >= strings.Count(s[:n], ")") {
			break
		}
		n--
	}
	if n <= scheme {
		return 0
	}
	return n
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// link matches [text](url) where url may hold balanced parentheses.
func link(s string) (text, url string, n int, ok bool) {
	close := strings.Index(s, "](")
	if close < 1 || strings.ContainsAny(s[1:close], "[]") {
		return "", "", 0, false
	}
	depth := 0
	for i := close + 2; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				u := s[close+2 : i]
				if !safeURL(u) {
					return "", "", 0, false
				}
				return s[1:close], u, i + 1, true
			}
			depth--
		case ' ':
			return "", "", 0, false
		}
	}
	return "", "", 0, false
}

func safeURL(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "tg://") || strings.HasPrefix(l, "mailto:")
}

// VisibleUnits returns the UTF-16 length of rendered HTML's text, as
// Telegram counts it after parsing entities.
func VisibleUnits(htmlText string) int {
	n := 0
	for i := 0; i < len(htmlText); {
		switch htmlText[i] {
		case '<':
			j := strings.IndexByte(htmlText[i:], '>')
			if j < 0 {
				return n + len(utf16.Encode([]rune(htmlText[i:])))
			}
			i += j + 1
			continue
		case '&':
			if j := strings.IndexByte(htmlText[i:], ';'); j > 0 && j < 10 {
				n++
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(htmlText[i:])
		n += utf16.RuneLen(r)
		i += size
	}
	return n
}

// SplitMarkdown cuts the model's Markdown into parts that each render to
// at most limit UTF-16 units, cutting between paragraphs, then lines, then
// words; a code block that must be cut is closed and reopened so no entity
// is ever broken. It returns the rendered HTML parts.
func SplitMarkdown(md string, limit int) []string {
	if limit <= 0 {
		limit = MaxMessageUnits
	}
	var parts []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, RenderHTML(strings.Join(cur, "\n")))
			cur = nil
		}
	}
	fits := func(lines []string) bool { return VisibleUnits(RenderHTML(strings.Join(lines, "\n"))) <= limit }
	for _, blk := range blocks(md) {
		if fits(append(append([]string(nil), cur...), blk...)) {
			cur = append(cur, blk...)
			continue
		}
		flush()
		if fits(blk) {
			cur = append(cur, blk...)
			continue
		}
		// One block is too long on its own: cut it line by line, keeping a
		// code block's fences around each piece.
		fence, _, isCode := openFence(blk[0])
		head, body, tail := []string(nil), blk, []string(nil)
		if isCode {
			head, body = blk[:1], blk[1:]
			if len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == fence {
				body, tail = body[:len(body)-1], []string{fence}
			} else {
				tail = []string{fence}
			}
		}
		piece := append([]string(nil), head...)
		for _, line := range body {
			for _, seg := range cutLine(line, limit-codeOverhead(isCode)) {
				try := append(append(append([]string(nil), piece...), seg), tail...)
				if fits(try) {
					piece = append(piece, seg)
					continue
				}
				if len(piece) > len(head) {
					parts = append(parts, RenderHTML(strings.Join(append(piece, tail...), "\n")))
				}
				piece = append(append([]string(nil), head...), seg)
			}
		}
		if len(piece) > len(head) {
			cur = append(piece, tail...)
		}
	}
	flush()
	if len(parts) == 0 {
		parts = []string{""}
	}
	return parts
}

func codeOverhead(code bool) int {
	if code {
		return 2
	}
	return 0
}

// blocks groups lines into paragraphs (blank-line separated) and whole
// fenced code blocks.
func blocks(md string) [][]string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	var out [][]string
	var para []string
	for i := 0; i < len(lines); i++ {
		if fence, _, ok := openFence(lines[i]); ok {
			if len(para) > 0 {
				out = append(out, para)
				para = nil
			}
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != fence {
				j++
			}
			end := min(j+1, len(lines))
			out = append(out, lines[i:end])
			i = end - 1
			continue
		}
		para = append(para, lines[i])
		if strings.TrimSpace(lines[i]) == "" {
			out = append(out, para)
			para = nil
		}
	}
	if len(para) > 0 {
		out = append(out, para)
	}
	return out
}

// cutLine cuts a line into pieces of at most limit UTF-16 units (after
// escaping), preferring spaces.
func cutLine(line string, limit int) []string {
	if limit < 16 {
		limit = 16
	}
	var out []string
	for VisibleUnits(escape(line)) > limit {
		units, cut, lastSpace := 0, 0, -1
		for i, r := range line {
			units += utf16.RuneLen(r)
			if units > limit {
				break
			}
			cut = i + utf8.RuneLen(r)
			if r == ' ' {
				lastSpace = i
			}
		}
		if lastSpace > limit/2 {
			cut = lastSpace + 1
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(line)
		}
		out = append(out, line[:cut])
		line = line[cut:]
	}
	return append(out, line)
}
