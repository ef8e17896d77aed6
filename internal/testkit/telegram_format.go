package testkit

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Entity is a Telegram MessageEntity. Offset and Length count UTF-16 code
// units, as the Bot API does.
type Entity struct {
	Type          string `json:"type"`
	Offset        int    `json:"offset"`
	Length        int    `json:"length"`
	URL           string `json:"url,omitempty"`
	Language      string `json:"language,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}

// ParseError is a formatting error as Telegram reports it after
// "Bad Request: can't parse entities: ".
type ParseError struct {
	Description string
}

func (e *ParseError) Error() string { return "can't parse entities: " + e.Description }

func parseErrorf(format string, args ...any) *ParseError {
	return &ParseError{Description: fmt.Sprintf(format, args...)}
}

// ErrUnsupportedParseMode is returned by ParseEntities for a parse mode
// Telegram does not know ("Bad Request: unsupported parse_mode").
var ErrUnsupportedParseMode = errors.New("unsupported parse_mode")

// MaxMessageLength is the Bot API limit on the text of one message, in
// UTF-16 code units after entity parsing.
const MaxMessageLength = 4096

// UTF16Len returns the length of s in UTF-16 code units, the unit Telegram
// uses for message lengths and entity offsets.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ParseEntities parses text the way the Bot API does for parse_mode ("" for
// plain text, "HTML", "MarkdownV2" or the legacy "Markdown"; case does not
// matter) and returns the visible text and its entities. Leading and trailing
// whitespace is trimmed as Telegram trims it. A formatting mistake returns a
// *ParseError whose Description matches Telegram's wording.
func ParseEntities(text, parseMode string) (string, []Entity, error) {
	var (
		plain string
		raw   []rawEntity
		err   error
	)
	switch strings.ToLower(parseMode) {
	case "":
		plain = text
	case "html":
		plain, raw, err = parseHTML(text)
	case "markdownv2":
		plain, raw, err = parseMarkdownV2(text)
	case "markdown":
		plain, raw, err = parseMarkdownV1(text)
	default:
		return "", nil, ErrUnsupportedParseMode
	}
	if err != nil {
		return "", nil, err
	}
	plain, raw = trimText(plain, raw)
	return plain, toUTF16Entities(plain, raw), nil
}

// rawEntity is an entity with byte offsets into the parsed text.
type rawEntity struct {
	Type          string
	Start, End    int // bytes
	URL           string
	Language      string
	CustomEmojiID string
}

// trimText removes leading whitespace that is not inside an entity and all
// trailing whitespace, shifting and clipping entities, as Telegram does.
func trimText(s string, ents []rawEntity) (string, []rawEntity) {
	firstEntity := len(s)
	for _, e := range ents {
		if e.Start < firstEntity {
			firstEntity = e.Start
		}
	}
	lead := 0
	for lead < firstEntity {
		r, size := utf8.DecodeRuneInString(s[lead:])
		if !unicode.IsSpace(r) {
			break
		}
		lead += size
	}
	end := len(s)
	for end > lead {
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= size
	}
	out := ents[:0:0]
	for _, e := range ents {
		e.Start -= lead
		e.End -= lead
		if e.End > end-lead {
			e.End = end - lead
		}
		if e.Start < 0 {
			e.Start = 0
		}
		if e.End > e.Start {
			out = append(out, e)
		}
	}
	return s[lead:end], out
}

func toUTF16Entities(s string, ents []rawEntity) []Entity {
	if len(ents) == 0 {
		return nil
	}
	// prefix[i] = UTF-16 length of s[:i] at rune boundaries.
	prefix := make([]int, len(s)+1)
	n := 0
	for i, r := range s {
		prefix[i] = n
		n += utf16.RuneLen(r)
	}
	prefix[len(s)] = n
	sort.SliceStable(ents, func(i, j int) bool {
		if ents[i].Start != ents[j].Start {
			return ents[i].Start < ents[j].Start
		}
		return ents[i].End > ents[j].End
	})
	out := make([]Entity, 0, len(ents))
	for _, e := range ents {
		off := prefix[e.Start]
		out = append(out, Entity{
			Type:          e.Type,
			Offset:        off,
			Length:        prefix[e.End] - off,
			URL:           e.URL,
			Language:      e.Language,
			CustomEmojiID: e.CustomEmojiID,
		})
	}
	return out
}

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
		var endChar byte
		typ := ""
		lang := ""
		switch c {
		case '_':
			typ, endChar = "italic", '_'
		case '*':
			typ, endChar = "bold", '*'
		case '[':
			typ, endChar = "text_link", ']'
		case '`':
			if i+2 < n && text[i+1] == '`' && text[i+2] == '`' {
				i += 2
				typ, endChar = "pre", '`'
				j := i + 1
				for j < n && !isHTMLSpace(text[j]) && text[j] != '`' {
					j++
				}
				if j > i+1 && j < n && text[j] != '`' {
					lang = text[i+1 : j]
					i = j - 1
				}
			} else {
				typ, endChar = "code", '`'
			}
		}
		i++
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

// EscapeMarkdownV2 escapes every MarkdownV2 reserved character in s so that
// it is shown literally.
func EscapeMarkdownV2(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(MarkdownV2Reserved, s[i]) >= 0 || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// EscapeHTML escapes s for parse_mode HTML with the only named entities
// Telegram understands.
func EscapeHTML(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

// autoEntities finds the entities Telegram adds to incoming text by itself:
// /commands, @mentions and #hashtags.
func autoEntities(text string) []Entity {
	var raw []rawEntity
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
		prevOK := i == 0 || !isWordByte(text[i-1])
		if prevOK && (c == '/' || c == '@' || c == '#') {
			j := i + 1
			for j < n && (isWordByte(text[j]) || (c == '/' && text[j] == '@')) {
				j++
			}
			if j-i > 1 {
				switch c {
				case '/':
					raw = append(raw, rawEntity{Type: "bot_command", Start: i, End: j})
				case '@':
					if j-i > 4 {
						raw = append(raw, rawEntity{Type: "mention", Start: i, End: j})
					}
				case '#':
					raw = append(raw, rawEntity{Type: "hashtag", Start: i, End: j})
				}
				i = j
				continue
			}
		}
		i++
	}
	return toUTF16Entities(text, raw)
}

func isWordByte(c byte) bool {
	return isASCIIAlnum(c) || c == '_'
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
