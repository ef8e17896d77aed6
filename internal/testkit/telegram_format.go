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
