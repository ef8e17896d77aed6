package testkit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// parseEntitiesCases are texts in each parse mode with the plain text and
// entities (UTF-16 offsets) Telegram makes of them, or its error.
var parseEntitiesCases = []struct {
	name    string
	text    string
	mode    string
	plain   string
	ents    []Entity
	wantErr string
}{
	{name: "plain keeps markup chars", text: "a < b & *c*", mode: "", plain: "a < b & *c*"},
	{name: "trim", text: "  \n hi \n ", mode: "", plain: "hi"},

	{name: "html tags", text: "<b>B</b><strong>S</strong><i>I</i><em>E</em><u>U</u><ins>N</ins><s>s</s><strike>k</strike><del>d</del>", mode: "HTML",
		plain: "BSIEUNskd", ents: []Entity{
			{Type: "bold", Offset: 0, Length: 1}, {Type: "bold", Offset: 1, Length: 1},
			{Type: "italic", Offset: 2, Length: 1}, {Type: "italic", Offset: 3, Length: 1},
			{Type: "underline", Offset: 4, Length: 1}, {Type: "underline", Offset: 5, Length: 1},
			{Type: "strikethrough", Offset: 6, Length: 1}, {Type: "strikethrough", Offset: 7, Length: 1},
			{Type: "strikethrough", Offset: 8, Length: 1},
		}},
	{name: "html nested and link", text: `<b>x <a href="https://e.com/?a=1&amp;b=2">y</a></b>`, mode: "html", plain: "x y",
		ents: []Entity{{Type: "bold", Offset: 0, Length: 3}, {Type: "text_link", Offset: 2, Length: 1, URL: "https://e.com/?a=1&b=2"}}},
	{name: "html spoiler and emoji", text: `<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`, mode: "HTML",
		plain: "st👍", ents: []Entity{{Type: "spoiler", Offset: 0, Length: 1}, {Type: "spoiler", Offset: 1, Length: 1},
			{Type: "custom_emoji", Offset: 2, Length: 2, CustomEmojiID: "5368324170671202286"}}},
	{name: "html pre language", text: `<pre><code class="language-go">x := 1</code></pre>`, mode: "HTML", plain: "x := 1",
		ents: []Entity{{Type: "pre", Offset: 0, Length: 6, Language: "go"}}},
	{name: "html blockquote expandable", text: "<blockquote expandable>q</blockquote>", mode: "HTML", plain: "q",
		ents: []Entity{{Type: "expandable_blockquote", Offset: 0, Length: 1}}},
	{name: "html entities", text: "&lt;&gt;&amp;&quot;&#65;&#x42;&nbsp;&", mode: "HTML", plain: `<>&"AB&nbsp;&`},
	{name: "html utf16 offsets", text: "😀<b>é😀</b>", mode: "HTML", plain: "😀é😀", ents: []Entity{{Type: "bold", Offset: 2, Length: 3}}},
	{name: "html uppercase tag", text: "<B>x</B>", mode: "HTML", plain: "x", ents: []Entity{{Type: "bold", Offset: 0, Length: 1}}},
	{name: "html closing shorthand", text: "<b>x</>", mode: "HTML", plain: "x", ents: []Entity{{Type: "bold", Offset: 0, Length: 1}}},
	{name: "html br", text: "a<br/>b", mode: "HTML", wantErr: `Unsupported start tag "br/" at byte offset 1`},
	{name: "html p", text: "<p>x</p>", mode: "HTML", wantErr: `Unsupported start tag "p" at byte offset 0`},
	{name: "html lone lt", text: "1 < 2", mode: "HTML", wantErr: `Unsupported start tag "" at byte offset 2`},
	{name: "html unclosed start", text: "x <b", mode: "HTML", wantErr: "Unclosed start tag at byte offset 2"},
	{name: "html unexpected end", text: "x</b>", mode: "HTML", wantErr: "Unexpected end tag at byte offset 1"},
	{name: "html unmatched", text: "<b><i>x</b></i>", mode: "HTML", wantErr: `Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`},
	{name: "html missing end", text: "<i>x", mode: "HTML", wantErr: `Can't find end tag corresponding to start tag "i"`},
	{name: "html bad attribute", text: `<a href=x/y>x</a>`, mode: "HTML", wantErr: "Unexpected end of name token at byte offset 8"},
	{name: "html empty href", text: `<a href=>x</a>`, mode: "HTML", plain: "x"},

	{name: "mdv2 entities", text: "*b* _i_ __u__ ~s~ ||p|| `c`", mode: "MarkdownV2", plain: "b i u s p c", ents: []Entity{
		{Type: "bold", Offset: 0, Length: 1}, {Type: "italic", Offset: 2, Length: 1}, {Type: "underline", Offset: 4, Length: 1},
		{Type: "strikethrough", Offset: 6, Length: 1}, {Type: "spoiler", Offset: 8, Length: 1}, {Type: "code", Offset: 10, Length: 1},
	}},
	{name: "mdv2 escapes", text: `\_\*\[\]\(\)\~\` + "`" + `\>\#\+\-\=\|\{\}\.\!\\`, mode: "markdownv2", plain: "_*[]()~`>#+-=|{}.!\\"},
	{name: "mdv2 link", text: `[site](https://e.com/a\)b) \.`, mode: "MarkdownV2", plain: "site .",
		ents: []Entity{{Type: "text_link", Offset: 0, Length: 4, URL: "https://e.com/a)b"}}},
	{name: "mdv2 pre", text: "```python\nprint(1.5)\n```", mode: "MarkdownV2", plain: "print(1.5)",
		ents: []Entity{{Type: "pre", Offset: 0, Length: 10, Language: "python"}}},
	{name: "mdv2 code keeps reserved", text: "`a.b-c!`", mode: "MarkdownV2", plain: "a.b-c!", ents: []Entity{{Type: "code", Offset: 0, Length: 6}}},
	{name: "mdv2 quote", text: ">quoted\n>more\nafter", mode: "MarkdownV2", plain: "quoted\nmore\nafter",
		ents: []Entity{{Type: "blockquote", Offset: 0, Length: 11}}},
	{name: "mdv2 nested", text: "*bold _both_*", mode: "MarkdownV2", plain: "bold both",
		ents: []Entity{{Type: "bold", Offset: 0, Length: 9}, {Type: "italic", Offset: 5, Length: 4}}},
	{name: "mdv2 dot", text: "Hi.", mode: "MarkdownV2", wantErr: `Character '.' is reserved and must be escaped with the preceding '\'`},
	{name: "mdv2 dash", text: "a - b", mode: "MarkdownV2", wantErr: `Character '-' is reserved`},
	{name: "mdv2 paren", text: "f(x)", mode: "MarkdownV2", wantErr: `Character '(' is reserved`},
	{name: "mdv2 mid-line gt", text: "a > b", mode: "MarkdownV2", wantErr: `Character '>' is reserved`},
	{name: "mdv2 single pipe", text: "a | b", mode: "MarkdownV2", wantErr: `Character '|' is reserved`},
	{name: "mdv2 open italic", text: "snake_case", mode: "MarkdownV2", wantErr: "Can't find end of Italic entity at byte offset 5"},
	{name: "mdv2 open pre", text: "x ```", mode: "MarkdownV2", wantErr: "Can't find end of Pre entity at byte offset 2"},
	{name: "mdv2 url unterminated", text: "[a](http://x", mode: "MarkdownV2", wantErr: "Can't find end of a URL at byte offset 4"},

	{name: "markdown v1", text: "*b* _i_ `c` [l](e.com) a.b-c", mode: "Markdown", plain: "b i c l a.b-c", ents: []Entity{
		{Type: "bold", Offset: 0, Length: 1}, {Type: "italic", Offset: 2, Length: 1}, {Type: "code", Offset: 4, Length: 1},
		{Type: "text_link", Offset: 6, Length: 1, URL: "http://e.com/"},
	}},
	{name: "markdown v1 open", text: "snake_case", mode: "Markdown", wantErr: "Can't find end of the entity starting at byte offset 5"},
	{name: "markdown v1 pre", text: "```go\nx``` ```y```", mode: "Markdown", plain: "\nx y", ents: []Entity{
		{Type: "pre", Offset: 0, Length: 2, Language: "go"}, {Type: "pre", Offset: 3, Length: 1},
	}},
}

func TestParseEntities(t *testing.T) {
	for _, tc := range parseEntitiesCases {
		t.Run(tc.name, func(t *testing.T) {
			plain, ents, err := ParseEntities(tc.text, tc.mode)
			if tc.wantErr != "" {
				var pe *ParseError
				if !errors.As(err, &pe) || !strings.Contains(pe.Description, tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if plain != tc.plain {
				t.Errorf("plain = %q, want %q", plain, tc.plain)
			}
			if diff := cmp.Diff(tc.ents, ents); diff != "" {
				t.Errorf("entities (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscapersRoundTrip(t *testing.T) {
	for _, s := range []string{"1.5 - (x) [y] {z} a_b *c* ~d~ `e` >f #g +h =i |j !k \\l", "<b>&\"</b>"} {
		if plain, _, err := ParseEntities(EscapeMarkdownV2(s), "MarkdownV2"); err != nil || plain != s {
			t.Errorf("MarkdownV2 round trip of %q = %q, %v", s, plain, err)
		}
		if plain, _, err := ParseEntities(EscapeHTML(s), "HTML"); err != nil || plain != s {
			t.Errorf("HTML round trip of %q = %q, %v", s, plain, err)
		}
	}
}

func FuzzParseEntities(f *testing.F) {
	for _, s := range []string{"<b>x</b>", "*a* _b_ __c__", "[l](http://x)", "```go\nx\n```", ">q\n>r", "&lt;&#1;", "😀<i>é</i>", "a\\.b", "||s||", "![e](tg://emoji?id=1)"} {
		for _, m := range []string{"HTML", "MarkdownV2", "Markdown", ""} {
			f.Add(s, m)
		}
	}
	f.Fuzz(func(t *testing.T, text, mode string) {
		if !utf8.ValidString(text) {
			return
		}
		plain, ents, err := ParseEntities(text, mode)
		if err != nil {
			return
		}
		if !utf8.ValidString(plain) && utf8.ValidString(text) && !strings.ContainsRune(text, '&') {
			t.Fatalf("invalid UTF-8 out of valid input: %q", plain)
		}
		n := UTF16Len(plain)
		for _, e := range ents {
			if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > n {
				t.Fatalf("entity %+v out of range for %q (len %d)", e, plain, n)
			}
		}
	})
}

func ExampleParseEntities() {
	plain, ents, _ := ParseEntities("<b>Due</b> in 2 days", "HTML")
	fmt.Println(plain, ents[0].Type, ents[0].Offset, ents[0].Length)
	_, _, err := ParseEntities("Due in 2.5 days", "MarkdownV2")
	fmt.Println(err)
	// Output:
	// Due in 2 days bold 0 3
	// can't parse entities: Character '.' is reserved and must be escaped with the preceding '\'
}

func ExampleEscapeMarkdownV2() {
	fmt.Println(EscapeMarkdownV2("Total: 3.5 (approx.)"))
	// Output: Total: 3\.5 \(approx\.\)
}
