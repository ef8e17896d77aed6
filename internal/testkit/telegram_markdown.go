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

// mdv2State is a MarkdownV2 parse in progress: the plain text so far, the
// open entities, the finished ones and the blockquote being read.
type mdv2State struct {
	out         strings.Builder
	stack       []mdOpen
	ents        []rawEntity
	quoteStart  int // output offset where the current blockquote began; -1 for none
	quoteExpand bool
}

func (st *mdv2State) inCode() bool {
	return len(st.stack) > 0 && (st.stack[len(st.stack)-1].typ == "code" || st.stack[len(st.stack)-1].typ == "pre")
}

// closeQuote ends the current blockquote, if any (without the newline that
// ended it).
func (st *mdv2State) closeQuote() {
	if st.quoteStart < 0 {
		return
	}
	end := st.out.Len()
	if end > st.quoteStart && strings.HasSuffix(st.out.String(), "\n") {
		end--
	}
	if end > st.quoteStart {
		t := "blockquote"
		if st.quoteExpand {
			t = "expandable_blockquote"
		}
		st.ents = append(st.ents, rawEntity{Type: t, Start: st.quoteStart, End: end})
	}
	st.quoteStart = -1
	st.quoteExpand = false
}

func parseMarkdownV2(text string) (string, []rawEntity, error) {
	st := &mdv2State{quoteStart: -1}
	n := len(text)
	at := func(i int) byte {
		if i < n {
			return text[i]
		}
		return 0
	}
	for i := 0; i < n; i++ {
		c := text[i]
		if (i == 0 || text[i-1] == '\n') && !st.inCode() {
			switch {
			case c == '>':
				if st.quoteStart < 0 {
					st.quoteStart = st.out.Len()
				}
				continue
			case c == '*' && at(i+1) == '*' && at(i+2) == '>':
				if st.quoteStart < 0 {
					st.quoteStart = st.out.Len()
				}
				st.quoteExpand = true
				i += 2
				continue
			default:
				st.closeQuote()
			}
		}
		if c == '\\' && at(i+1) > 0 && at(i+1) <= 126 {
			i++
			st.out.WriteByte(text[i])
			continue
		}
		reserved := MarkdownV2Reserved
		if st.inCode() {
			reserved = "`"
		}
		if strings.IndexByte(reserved, c) < 0 {
			st.out.WriteByte(c)
			continue
		}
		// "||" at the end of an expandable quote's last line closes it.
		if c == '|' && at(i+1) == '|' && st.quoteExpand && st.quoteStart >= 0 && (at(i+2) == '\n' || i+2 >= n) &&
			(len(st.stack) == 0 || st.stack[len(st.stack)-1].typ != "spoiler") {
			i++
			continue
		}
		if len(st.stack) == 0 || !mdv2Closes(st.stack[len(st.stack)-1].typ, text, i) {
			open, last, err := mdv2Opener(text, i)
			if err != nil {
				return "", nil, err
			}
			open.outStart = st.out.Len()
			st.stack = append(st.stack, open)
			i = last
			continue
		}
		last, err := st.closeEntity(text, i)
		if err != nil {
			return "", nil, err
		}
		i = last
	}
	if len(st.stack) > 0 {
		top := st.stack[len(st.stack)-1]
		return "", nil, parseErrorf("Can't find end of %s entity at byte offset %d", mdTypeNames[top.typ], top.byteOffset)
	}
	st.closeQuote()
	return st.out.String(), st.ents, nil
}

// mdv2Closes reports whether text[i] closes an open entity of type typ.
func mdv2Closes(typ, text string, i int) bool {
	at := func(i int) byte {
		if i < len(text) {
			return text[i]
		}
		return 0
	}
	c := text[i]
	switch typ {
	case "bold":
		return c == '*'
	case "italic":
		return c == '_' && at(i+1) != '_'
	case "code":
		return c == '`'
	case "pre":
		return c == '`' && at(i+1) == '`' && at(i+2) == '`'
	case "text_link", "custom_emoji":
		return c == ']'
	case "underline":
		return c == '_' && at(i+1) == '_'
	case "strikethrough":
		return c == '~'
	case "spoiler":
		return c == '|' && at(i+1) == '|'
	}
	return false
}

// mdv2Opener reads the entity opening at text[i]: the entity (a pre
// block's language included) and the index of the opener's last byte.
func mdv2Opener(text string, i int) (mdOpen, int, error) {
	n := len(text)
	at := func(i int) byte {
		if i < n {
			return text[i]
		}
		return 0
	}
	c := text[i]
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
			return mdOpen{}, 0, reservedError(c)
		}
		i++
		open.typ = "spoiler"
	case '[':
		open.typ = "text_link"
	case '`':
		if at(i+1) != '`' || at(i+2) != '`' {
			open.typ = "code"
			break
		}
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
	case '!':
		if at(i+1) != '[' {
			return mdOpen{}, 0, reservedError(c)
		}
		i++
		open.typ = "custom_emoji"
	default:
		return mdOpen{}, 0, reservedError(c)
	}
	return open, i, nil
}

// closeEntity closes the innermost entity at text[i] (its closer; for a
// link, the "(url)" after it) and returns the index of the closer's last
// byte. Empty entities and links Telegram cannot use are dropped.
func (st *mdv2State) closeEntity(text string, i int) (int, error) {
	top := st.stack[len(st.stack)-1]
	st.stack = st.stack[:len(st.stack)-1]
	e := rawEntity{Type: top.typ, Start: top.outStart, End: st.out.Len()}
	switch top.typ {
	case "underline", "spoiler":
		i++
	case "pre":
		i += 2
		e.Language = top.lang
	case "text_link", "custom_emoji":
		url, last, err := mdv2LinkTarget(text, i, st.out.String()[top.outStart:], top.typ == "custom_emoji")
		if err != nil {
			return 0, err
		}
		i = last
		if top.typ == "custom_emoji" {
			id, ok := strings.CutPrefix(url, "tg://emoji?id=")
			if !ok || id == "" {
				return 0, parseErrorf("Custom emoji URL must have an emoji identifier")
			}
			e.CustomEmojiID = id
		} else {
			u, ok := normalizeLinkURL(url)
			if !ok {
				return i, nil // Telegram drops links it cannot use
			}
			e.URL = u
		}
	}
	if e.End > e.Start {
		st.ents = append(st.ents, e)
	}
	return i, nil
}

// mdv2LinkTarget reads the "(url)" after the ']' at text[i] (unescaping
// it) and returns it with the index of its ')'; without one, a link's
// target is its text and a custom emoji is an error.
func mdv2LinkTarget(text string, i int, linkText string, emoji bool) (string, int, error) {
	n := len(text)
	if i+1 >= n || text[i+1] != '(' {
		if emoji {
			return "", 0, parseErrorf("Custom emoji entity must contain a tg://emoji URL")
		}
		return linkText, i, nil
	}
	i += 2
	urlStart := i
	var ub strings.Builder
	for i < n && text[i] != ')' {
		if text[i] == '\\' && i+1 < n && text[i+1] > 0 && text[i+1] <= 126 {
			ub.WriteByte(text[i+1])
			i += 2
			continue
		}
		ub.WriteByte(text[i])
		i++
	}
	if i >= n {
		return "", 0, parseErrorf("Can't find end of a URL at byte offset %d", urlStart)
	}
	return ub.String(), i, nil
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
