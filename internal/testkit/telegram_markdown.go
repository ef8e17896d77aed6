package testkit

import (
	"strings"
)

// The Bot API's MarkdownV2 and legacy Markdown parse modes, as Telegram
// parses them.

func isASCIIAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// MarkdownV2Reserved lists the characters that must be escaped with a
// preceding '\' outside entities in MarkdownV2.
const MarkdownV2Reserved = "_*[]()~`>#+-=|{}.!"

type mdOpen struct {
	typ        string // bold, italic, underline, strikethrough, spoiler, code, pre, text_link, custom_emoji
	lang       string
	outStart   int
	byteOffset int
}

var mdTypeNames = map[string]string{
	"bold": "Bold", "italic": "Italic", "underline": "Underline", "strikethrough": "Strikethrough",
	"spoiler": "Spoiler", "code": "Code", "pre": "Pre", "text_link": "TextUrl", "custom_emoji": "CustomEmoji",
}

func reservedError(c byte) error {
	return parseErrorf("Character '%c' is reserved and must be escaped with the preceding '\\'", c)
}

func parseMarkdownV2(text string) (string, []rawEntity, error) {
	var out strings.Builder
	var stack []mdOpen
	var ents []rawEntity
	n := len(text)
	at := func(i int) byte {
		if i < n {
			return text[i]
		}
		return 0
	}
	quoteStart := -1 // output offset where the current blockquote began
	quoteExpand := false
	inCode := func() bool {
		return len(stack) > 0 && (stack[len(stack)-1].typ == "code" || stack[len(stack)-1].typ == "pre")
	}
	closeQuote := func() {
		if quoteStart >= 0 {
			end := out.Len()
			// the newline that ended the quote is not part of it
			if end > quoteStart && strings.HasSuffix(out.String(), "\n") {
				end--
			}
			if end > quoteStart {
				t := "blockquote"
				if quoteExpand {
					t = "expandable_blockquote"
				}
				ents = append(ents, rawEntity{Type: t, Start: quoteStart, End: end})
			}
			quoteStart = -1
			quoteExpand = false
		}
	}
	for i := 0; i < n; i++ {
		c := text[i]
		lineStart := i == 0 || text[i-1] == '\n'
		if lineStart && !inCode() {
			switch {
			case c == '>':
				if quoteStart < 0 {
					quoteStart = out.Len()
				}
				continue
			case c == '*' && at(i+1) == '*' && at(i+2) == '>':
				if quoteStart < 0 {
					quoteStart = out.Len()
				}
				quoteExpand = true
				i += 2
				continue
			default:
				closeQuote()
			}
		}
		if c == '\\' && at(i+1) > 0 && at(i+1) <= 126 {
			i++
			out.WriteByte(text[i])
			continue
		}
		reserved := MarkdownV2Reserved
		if inCode() {
			reserved = "`"
		}
		if strings.IndexByte(reserved, c) < 0 {
			out.WriteByte(c)
			continue
		}
		// "||" at the end of an expandable quote's last line closes it.
		if c == '|' && at(i+1) == '|' && quoteExpand && quoteStart >= 0 && (at(i+2) == '\n' || i+2 >= n) &&
			(len(stack) == 0 || stack[len(stack)-1].typ != "spoiler") {
			i++
			continue
		}
		isEnd := false
		if len(stack) > 0 {
			switch stack[len(stack)-1].typ {
			case "bold":
				isEnd = c == '*'
			case "italic":
				isEnd = c == '_' && at(i+1) != '_'
			case "code":
				isEnd = c == '`'
			case "pre":
				isEnd = c == '`' && at(i+1) == '`' && at(i+2) == '`'
			case "text_link", "custom_emoji":
				isEnd = c == ']'
			case "underline":
				isEnd = c == '_' && at(i+1) == '_'
			case "strikethrough":
				isEnd = c == '~'
			case "spoiler":
				isEnd = c == '|' && at(i+1) == '|'
			}
		}
		if !isEnd {
			open := mdOpen{byteOffset: i}
			switch c {
			case '_':
				if at(i+1) == '_' {
					open.typ = "underline"
					i++
				} else {
					open.typ = "italic"
				}
			case '*':
				open.typ = "bold"
			case '~':
				open.typ = "strikethrough"
			case '|':
				if at(i+1) != '|' {
					return "", nil, reservedError(c)
				}
				i++
				open.typ = "spoiler"
			case '[':
				open.typ = "text_link"
			case '`':
				if at(i+1) == '`' && at(i+2) == '`' {
					i += 3
					open.typ = "pre"
					langEnd := i
					for langEnd < n && !isHTMLSpace(text[langEnd]) && text[langEnd] != '`' {
						langEnd++
					}
					if i != langEnd && langEnd < n && text[langEnd] != '`' {
						open.lang = text[i:langEnd]
						i = langEnd
					}
					if at(i) == '\n' || at(i) == '\r' {
						if (at(i+1) == '\n' || at(i+1) == '\r') && at(i) != at(i+1) {
							i += 2
						} else {
							i++
						}
					}
					i--
				} else {
					open.typ = "code"
				}
			case '!':
				if at(i+1) != '[' {
					return "", nil, reservedError(c)
				}
				i++
				open.typ = "custom_emoji"
			default:
				return "", nil, reservedError(c)
			}
			open.outStart = out.Len()
			stack = append(stack, open)
			continue
		}
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := rawEntity{Type: top.typ, Start: top.outStart, End: out.Len()}
		switch top.typ {
		case "underline", "spoiler":
			i++
		case "pre":
			i += 2
			e.Language = top.lang
		case "text_link", "custom_emoji":
			var url string
			if at(i+1) != '(' {
				if top.typ == "custom_emoji" {
					return "", nil, parseErrorf("Custom emoji entity must contain a tg://emoji URL")
				}
				url = out.String()[top.outStart:]
			} else {
				i += 2
				urlStart := i
				var ub strings.Builder
				for i < n && text[i] != ')' {
					if text[i] == '\\' && at(i+1) > 0 && at(i+1) <= 126 {
						ub.WriteByte(text[i+1])
						i += 2
						continue
					}
					ub.WriteByte(text[i])
					i++
				}
				if i >= n {
					return "", nil, parseErrorf("Can't find end of a URL at byte offset %d", urlStart)
				}
				url = ub.String()
			}
			if top.typ == "custom_emoji" {
				id, ok := strings.CutPrefix(url, "tg://emoji?id=")
				if !ok || id == "" {
					return "", nil, parseErrorf("Custom emoji URL must have an emoji identifier")
				}
				e.CustomEmojiID = id
			} else {
				u, ok := normalizeLinkURL(url)
				if !ok {
					continue // Telegram drops links it cannot use
				}
				e.URL = u
			}
		}
		if e.End > e.Start {
			ents = append(ents, e)
		}
	}
	if len(stack) > 0 {
		top := stack[len(stack)-1]
		return "", nil, parseErrorf("Can't find end of %s entity at byte offset %d", mdTypeNames[top.typ], top.byteOffset)
	}
	closeQuote()
	return out.String(), ents, nil
}

// normalizeLinkURL mimics Telegram's handling of link targets: a URL without
// a scheme gets "http://" and a trailing "/" after a bare host.
func normalizeLinkURL(u string) (string, bool) {
	u = strings.TrimSpace(u)
	if u == "" {
		return "", false
	}
	if strings.HasPrefix(u, "tg://") || strings.HasPrefix(u, "mailto:") {
		return u, true
	}
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	scheme, rest, _ := strings.Cut(u, "://")
	switch strings.ToLower(scheme) {
	case "http", "https", "ftp", "tonsite":
	default:
		return "", false
	}
	if rest == "" {
		return "", false
	}
	if !strings.ContainsAny(rest, "/?#") {
		u += "/"
	}
	return u, true
}

// parseMarkdownV1 parses the legacy "Markdown" mode: *bold*, _italic_,
// `code`, ```pre``` and [text](url); '\' escapes only _*`[.
func parseMarkdownV1(text string) (string, []rawEntity, error) {
	var out strings.Builder
	var ents []rawEntity
	n := len(text)
	for i := 0; i < n; i++ {
		c := text[i]
		if c == '\\' && i+1 < n && strings.IndexByte("_*`[", text[i+1]) >= 0 {
			i++
			out.WriteByte(text[i])
			continue
		}
		if strings.IndexByte("_*`[", c) < 0 {
			out.WriteByte(c)
			continue
		}
		begin := i
		typ, endChar, lang, at := v1Opener(text, i)
		i = at + 1
		start := out.Len()
		for i < n && text[i] != endChar {
			if typ != "code" && typ != "pre" && text[i] == '\\' && i+1 < n && text[i+1] == endChar {
				i++
			}
			out.WriteByte(text[i])
			i++
		}
		if i >= n {
			return "", nil, parseErrorf("Can't find end of the entity starting at byte offset %d", begin)
		}
		if typ == "pre" {
			if i+2 >= n || text[i+1] != '`' || text[i+2] != '`' {
				return "", nil, parseErrorf("Can't find end of the entity starting at byte offset %d", begin)
			}
			i += 2
		}
		e := rawEntity{Type: typ, Start: start, End: out.Len(), Language: lang}
		if typ == "text_link" {
			if i+1 < n && text[i+1] == '(' {
				j := i + 2
				for j < n && text[j] != ')' {
					j++
				}
				if j >= n {
					return "", nil, parseErrorf("Can't find end of a URL at byte offset %d", i+2)
				}
				u, ok := normalizeLinkURL(text[i+2 : j])
				i = j
				if !ok {
					continue
				}
				e.URL = u
			} else {
				continue
			}
		}
		if e.End > e.Start {
			ents = append(ents, e)
		}
	}
	return out.String(), ents, nil
}

// v1Opener classifies the legacy Markdown entity opening at text[i] (one
// of _*`[): its type, the byte that closes it, a pre block's language,
// and the index of the opener's last byte (past "```" and the language).
func v1Opener(text string, i int) (typ string, endChar byte, lang string, last int) {
	n := len(text)
	switch text[i] {
	case '_':
		return "italic", '_', "", i
	case '*':
		return "bold", '*', "", i
	case '[':
		return "text_link", ']', "", i
	}
	if !(i+2 < n && text[i+1] == '`' && text[i+2] == '`') {
		return "code", '`', "", i
	}
	i += 2
	j := i + 1
	for j < n && !isHTMLSpace(text[j]) && text[j] != '`' {
		j++
	}
	if j > i+1 && j < n && text[j] != '`' {
		return "pre", '`', text[i+1 : j], j - 1
	}
	return "pre", '`', "", i
}
