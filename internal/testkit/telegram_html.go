package testkit

import (
	"strings"
)

// The Bot API's HTML parse mode, as Telegram parses it.

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

// decodeHTMLEntity decodes the character reference at the start of s
// (which begins with '&'). It returns the rune and the number of bytes used,
// or ok=false when Telegram would leave the '&' as literal text: only
// &lt; &gt; &amp; &quot; and numeric references are understood.
func decodeHTMLEntity(s string) (rune, int, bool) {
	if len(s) < 2 || s[0] != '&' {
		return 0, 0, false
	}
	i := 1
	if s[1] == '#' {
		i = 2
		hex := false
		if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
			hex = true
			i++
		}
		start := i
		var v int64
		for i < len(s) {
			c := s[i]
			var d int64
			switch {
			case c >= '0' && c <= '9':
				d = int64(c - '0')
			case hex && c >= 'a' && c <= 'f':
				d = int64(c-'a') + 10
			case hex && c >= 'A' && c <= 'F':
				d = int64(c-'A') + 10
			default:
				d = -1
			}
			if d < 0 {
				break
			}
			if hex {
				v = v*16 + d
			} else {
				v = v*10 + d
			}
			if v >= 0x10ffff {
				return 0, 0, false
			}
			i++
		}
		if i == start || v == 0 {
			return 0, 0, false
		}
		if i < len(s) && s[i] == ';' {
			i++
		}
		return rune(v), i, true
	}
	for i < len(s) && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
		i++
	}
	var r rune
	switch s[1:i] {
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "amp":
		r = '&'
	case "quot":
		r = '"'
	default:
		return 0, 0, false
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	return r, i, true
}

var htmlTags = map[string]bool{
	"a": true, "b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true, "tg-emoji": true,
	"code": true, "pre": true, "blockquote": true,
}

type htmlOpen struct {
	tag      string
	attr     string // href, class, emoji-id
	expand   bool   // blockquote expandable
	outStart int
}

func decodeHTMLText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '&' {
			if r, n, ok := decodeHTMLEntity(s[i:]); ok {
				b.WriteRune(r)
				i += n - 1
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func parseHTML(text string) (string, []rawEntity, error) {
	var out strings.Builder
	var stack []htmlOpen
	var ents []rawEntity
	n := len(text)
	for i := 0; i < n; i++ {
		c := text[i]
		if c == '&' {
			if r, size, ok := decodeHTMLEntity(text[i:]); ok {
				out.WriteRune(r)
				i += size - 1
				continue
			}
		}
		if c != '<' {
			out.WriteByte(c)
			continue
		}
		begin := i
		if i+1 >= n || text[i+1] != '/' {
			open, last, err := parseStartTag(text, begin)
			if err != nil {
				return "", nil, err
			}
			open.outStart = out.Len()
			stack = append(stack, open)
			i = last
			continue
		}
		if len(stack) == 0 {
			return "", nil, parseErrorf("Unexpected end tag at byte offset %d", begin)
		}
		endName, last, err := parseEndTag(text, begin)
		if err != nil {
			return "", nil, err
		}
		i = last
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if endName != "" && endName != top.tag {
			return "", nil, parseErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, top.tag, endName)
		}
		if out.Len() == top.outStart {
			continue // empty entities are dropped
		}
		if e, ok := closeHTMLEntity(top, stack, out.Len()); ok {
			ents = append(ents, e)
		}
	}
	if len(stack) > 0 {
		return "", nil, parseErrorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].tag)
	}
	return out.String(), ents, nil
}

// parseStartTag parses the start tag at text[begin] ('<') with its
// attributes, and returns it with the index of its closing '>'.
func parseStartTag(text string, begin int) (htmlOpen, int, error) {
	n := len(text)
	i := begin + 1
	for i < n && !isHTMLSpace(text[i]) && text[i] != '>' {
		i++
	}
	if i >= n {
		return htmlOpen{}, 0, parseErrorf("Unclosed start tag at byte offset %d", begin)
	}
	tag := strings.ToLower(text[begin+1 : i])
	if !htmlTags[tag] {
		return htmlOpen{}, 0, parseErrorf("Unsupported start tag \"%s\" at byte offset %d", tag, begin)
	}
	open := htmlOpen{tag: tag}
	for i >= n || text[i] != '>' {
		for i < n && isHTMLSpace(text[i]) {
			i++
		}
		if i < n && text[i] == '>' {
			break
		}
		if i >= n {
			return htmlOpen{}, 0, parseErrorf("Unclosed start tag \"%s\" at byte offset %d", tag, begin)
		}
		name, value, bare, next, err := parseHTMLAttr(text, i, tag, begin)
		if err != nil {
			return htmlOpen{}, 0, err
		}
		i = next
		if bare {
			// A bare attribute (only "expandable" means something).
			if tag == "blockquote" && name == "expandable" {
				open.expand = true
			}
			continue
		}
		switch {
		case tag == "a" && name == "href",
			tag == "span" && name == "class",
			tag == "tg-emoji" && name == "emoji-id",
			tag == "code" && name == "class",
			tag == "pre" && name == "language":
			open.attr = value
		}
	}
	if tag == "span" && open.attr != "tg-spoiler" {
		return htmlOpen{}, 0, parseErrorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
	}
	if tag == "tg-emoji" && open.attr == "" {
		return htmlOpen{}, 0, parseErrorf("Custom emoji entity must have emoji-id attribute at byte offset %d", begin)
	}
	return open, i, nil
}

// parseHTMLAttr parses the attribute at text[i] of the tag that starts at
// begin: its lower-cased name, its value (bare when it has none) and the
// index after it.
func parseHTMLAttr(text string, i int, tag string, begin int) (name, value string, bare bool, next int, err error) {
	n := len(text)
	unclosed := func() error { return parseErrorf("Unclosed start tag \"%s\" at byte offset %d", tag, begin) }
	nameStart := i
	for i < n && !isHTMLSpace(text[i]) && text[i] != '=' && text[i] != '>' {
		i++
	}
	name = strings.ToLower(text[nameStart:i])
	if name == "" {
		return "", "", false, 0, parseErrorf("Empty attribute name in the tag \"%s\" at byte offset %d", tag, begin)
	}
	for i < n && isHTMLSpace(text[i]) {
		i++
	}
	if i >= n {
		return "", "", false, 0, unclosed()
	}
	if text[i] != '=' {
		return name, "", true, i, nil
	}
	i++
	for i < n && isHTMLSpace(text[i]) {
		i++
	}
	if i >= n {
		return "", "", false, 0, unclosed()
	}
	if text[i] != '"' && text[i] != '\'' {
		tokStart := i
		for i < n && (isASCIIAlnum(text[i]) || text[i] == '.' || text[i] == '-') {
			i++
		}
		if i >= n || (!isHTMLSpace(text[i]) && text[i] != '>') {
			return "", "", false, 0, parseErrorf("Unexpected end of name token at byte offset %d", tokStart)
		}
		return name, strings.ToLower(text[tokStart:i]), false, i, nil
	}
	q := text[i]
	i++
	vStart := i
	for i < n && text[i] != q {
		i++
	}
	if i >= n {
		return "", "", false, 0, parseErrorf("Unclosed end of attribute value at byte offset %d", vStart)
	}
	return name, decodeHTMLText(text[vStart:i]), false, i + 1, nil
}

// parseEndTag parses the end tag at text[begin] ("</") and returns its
// lower-cased name ("" for "</>") and the index of its closing '>'.
func parseEndTag(text string, begin int) (string, int, error) {
	n := len(text)
	i := begin + 2
	nameStart := i
	for i < n && !isHTMLSpace(text[i]) && text[i] != '>' {
		i++
	}
	endName := strings.ToLower(text[nameStart:i])
	for i < n && isHTMLSpace(text[i]) {
		i++
	}
	if i >= n || text[i] != '>' {
		return "", 0, parseErrorf("Unclosed end tag at byte offset %d", begin)
	}
	return endName, i, nil
}

// closeHTMLEntity is the entity a closed tag makes over [top.outStart,
// end); false for none (a link without href, or a <code class=language-x>
// right inside a <pre>, which gives the pre its language instead).
func closeHTMLEntity(top htmlOpen, stack []htmlOpen, end int) (rawEntity, bool) {
	e := rawEntity{Start: top.outStart, End: end}
	switch top.tag {
	case "b", "strong":
		e.Type = "bold"
	case "i", "em":
		e.Type = "italic"
	case "u", "ins":
		e.Type = "underline"
	case "s", "strike", "del":
		e.Type = "strikethrough"
	case "span", "tg-spoiler":
		e.Type = "spoiler"
	case "tg-emoji":
		e.Type = "custom_emoji"
		e.CustomEmojiID = top.attr
	case "a":
		if top.attr == "" {
			return e, false
		}
		e.Type = "text_link"
		e.URL = top.attr
	case "code":
		if len(stack) > 0 && stack[len(stack)-1].tag == "pre" && stack[len(stack)-1].outStart == top.outStart &&
			strings.HasPrefix(top.attr, "language-") {
			stack[len(stack)-1].attr = strings.TrimPrefix(top.attr, "language-")
			return e, false
		}
		e.Type = "code"
	case "pre":
		e.Type = "pre"
		e.Language = top.attr
	case "blockquote":
		e.Type = "blockquote"
		if top.expand {
			e.Type = "expandable_blockquote"
		}
	}
	return e, true
}
