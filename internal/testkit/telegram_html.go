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
	at := func(i int) byte {
		if i < n {
			return text[i]
		}
		return 0
	}
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
		i++
		if at(i) != '/' {
			for i < n && !isHTMLSpace(text[i]) && text[i] != '>' {
				i++
			}
			if i >= n {
				return "", nil, parseErrorf("Unclosed start tag at byte offset %d", begin)
			}
			tag := strings.ToLower(text[begin+1 : i])
			if !htmlTags[tag] {
				return "", nil, parseErrorf("Unsupported start tag \"%s\" at byte offset %d", tag, begin)
			}
			open := htmlOpen{tag: tag}
			for at(i) != '>' {
				for i < n && isHTMLSpace(text[i]) {
					i++
				}
				if at(i) == '>' {
					break
				}
				if i >= n {
					return "", nil, parseErrorf("Unclosed start tag \"%s\" at byte offset %d", tag, begin)
				}
				nameStart := i
				for i < n && !isHTMLSpace(text[i]) && text[i] != '=' && text[i] != '>' {
					i++
				}
				name := strings.ToLower(text[nameStart:i])
				if name == "" {
					return "", nil, parseErrorf("Empty attribute name in the tag \"%s\" at byte offset %d", tag, begin)
				}
				for i < n && isHTMLSpace(text[i]) {
					i++
				}
				if at(i) != '=' {
					// A bare attribute (only "expandable" means something).
					if i >= n {
						return "", nil, parseErrorf("Unclosed start tag \"%s\" at byte offset %d", tag, begin)
					}
					if tag == "blockquote" && name == "expandable" {
						open.expand = true
					}
					continue
				}
				i++
				for i < n && isHTMLSpace(text[i]) {
					i++
				}
				if i >= n {
					return "", nil, parseErrorf("Unclosed start tag \"%s\" at byte offset %d", tag, begin)
				}
				var value string
				if q := text[i]; q != '"' && q != '\'' {
					tokStart := i
					for i < n && (isASCIIAlnum(text[i]) || text[i] == '.' || text[i] == '-') {
						i++
					}
					value = strings.ToLower(text[tokStart:i])
					if i >= n || (!isHTMLSpace(text[i]) && text[i] != '>') {
						return "", nil, parseErrorf("Unexpected end of name token at byte offset %d", tokStart)
					}
				} else {
					i++
					vStart := i
					for i < n && text[i] != q {
						i++
					}
					if i >= n {
						return "", nil, parseErrorf("Unclosed end of attribute value at byte offset %d", vStart)
					}
					value = decodeHTMLText(text[vStart:i])
					i++
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
				return "", nil, parseErrorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
			}
			if tag == "tg-emoji" && open.attr == "" {
				return "", nil, parseErrorf("Custom emoji entity must have emoji-id attribute at byte offset %d", begin)
			}
			open.outStart = out.Len()
			stack = append(stack, open)
			continue
		}
		// End tag.
		if len(stack) == 0 {
			return "", nil, parseErrorf("Unexpected end tag at byte offset %d", begin)
		}
		i++
		nameStart := i
		for i < n && !isHTMLSpace(text[i]) && text[i] != '>' {
			i++
		}
		endName := strings.ToLower(text[nameStart:i])
		for i < n && isHTMLSpace(text[i]) {
			i++
		}
		if at(i) != '>' {
			return "", nil, parseErrorf("Unclosed end tag at byte offset %d", begin)
		}
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if endName != "" && endName != top.tag {
			return "", nil, parseErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, top.tag, endName)
		}
		end := out.Len()
		if end == top.outStart {
			continue // empty entities are dropped
		}
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
				continue
			}
			e.Type = "text_link"
			e.URL = top.attr
		case "code":
			// <pre><code class="language-x"> gives the pre its language.
			if len(stack) > 0 && stack[len(stack)-1].tag == "pre" && stack[len(stack)-1].outStart == top.outStart &&
				strings.HasPrefix(top.attr, "language-") {
				stack[len(stack)-1].attr = strings.TrimPrefix(top.attr, "language-")
				continue
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
		ents = append(ents, e)
	}
	if len(stack) > 0 {
		return "", nil, parseErrorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].tag)
	}
	return out.String(), ents, nil
}
