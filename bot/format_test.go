package bot_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
)

func TestRenderHTML(t *testing.T) {
	for _, tc := range []struct{ name, md, want string }{
		{"plain escaped", "a < b & c > d", "a &lt; b &amp; c &gt; d"},
		{"bold italic", "**bold** and *it* and _it2_", "<b>bold</b> and <i>it</i> and <i>it2</i>"},
		{"unbalanced stays literal", "2 * 3 = 6 and a_b_c and *open", "2 * 3 = 6 and a_b_c and *open"},
		{"script tag", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"link with parens", "[wiki](https://en.wikipedia.org/wiki/Go_(language))", `<a href="https://en.wikipedia.org/wiki/Go_(language)">wiki</a>`},
		{"javascript link refused", "[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"inline code", "use `a<b>` here", "use <code>a&lt;b&gt;</code> here"},
		{"fence", "```go\nfmt.Println(\"<hi>\")\n```", "<pre><code class=\"language-go\">fmt.Println(\"&lt;hi&gt;\")</code></pre>"},
		{"unclosed fence", "```\ncode", "<pre>code</pre>"},
		{"heading", "# Title", "<b>Title</b>"},
		{"quote", "> a\n> b", "<blockquote>a\nb</blockquote>"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"escapes", `\*not bold\*`, "*not bold*"},
		{"url keeps its underscores", "go to https://h.example/login?t=kcl_Zb8-yv_-a3 now.", "go to https://h.example/login?t=kcl_Zb8-yv_-a3 now."},
		{"url keeps its doubled marks", "http://x.y/a__b__c~~d~~e and **bold**", "http://x.y/a__b__c~~d~~e and <b>bold</b>"},
		{"url escaped, sentence dot outside", "see https://x.y/?a=1&b=<2>.", "see https://x.y/?a=1&amp;b=&lt;2&gt;."},
		{"url with parens", "(https://en.wikipedia.org/wiki/Go_(language))", "(https://en.wikipedia.org/wiki/Go_(language))"},
		{"intraword underscore opens nothing", "kcl_ab-c_-d and x__y__z", "kcl_ab-c_-d and x__y__z"},
		{"emphasis around a url", "**https://x.y/a_b_**", "<b>https://x.y/a_b_</b>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := bot.RenderHTML(tc.md)
			if got != tc.want {
				t.Fatalf("RenderHTML(%q)\n got %q\nwant %q", tc.md, got, tc.want)
			}
			if _, _, err := testkit.ParseEntities(got, "HTML"); err != nil {
				t.Fatalf("Telegram would reject %q: %v", got, err)
			}
		})
	}
}

var hostile = []string{
	"**unbalanced *stars_ and _underscores",
	"<script>alert('x')</script> & <b>not a tag</b>",
	"[link](https://example.com/a_(b)_c) [broken](http://x.y/(()",
	"```\nunclosed fence <tag>",
	"`unclosed code",
	"*__~~nested**__~~",
	"a\x00b\xffc",
	"> quote with **bold",
	"[a](https://x.y/\"onmouseover=alert(1))",
	strings.Repeat("*", 1000),
}

// TestLinksSurviveRendering: a URL with a random token (a console sign-in
// link, a search result) reaches the user exactly as written, whatever
// Markdown-like marks the token holds.
func TestLinksSurviveRendering(t *testing.T) {
	for i := 0; i < 5000; i++ {
		link := "https://k.example/console/login?t=" + kairos.NewSecret("kcl_")
		md := "Your link (works once):\n" + link
		got := bot.RenderHTML(md)
		text, _, err := testkit.ParseEntities(got, "HTML")
		if err != nil || !strings.Contains(text, link) {
			t.Fatalf("%q rendered as %q (%v)", md, got, err)
		}
	}
}

func TestHostileMarkdownIsAccepted(t *testing.T) {
	for _, md := range hostile {
		for _, part := range bot.SplitMarkdown(md, bot.MaxMessageUnits) {
			if _, _, err := testkit.ParseEntities(part, "HTML"); err != nil {
				t.Errorf("Telegram would reject the rendering of %q: %v\n%s", md, err, part)
			}
		}
	}
}

func TestSplitMarkdown(t *testing.T) {
	para := strings.Repeat("word ", 300) // 1500 chars
	code := "```\n" + strings.Repeat("line of code <x>\n", 600) + "```"
	emoji := strings.Repeat("😀", 5000) // 2 UTF-16 units each
	for _, tc := range []struct {
		name string
		md   string
		min  int
	}{
		{"paragraphs", strings.Repeat(para+"\n\n", 8), 3},
		{"long code block", code, 2},
		{"one huge line of emoji", emoji, 3},
		{"short", "hello", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := bot.SplitMarkdown(tc.md, bot.MaxMessageUnits)
			if len(parts) < tc.min {
				t.Fatalf("%d parts, want at least %d", len(parts), tc.min)
			}
			total := 0
			for i, p := range parts {
				plain, _, err := testkit.ParseEntities(p, "HTML")
				if err != nil {
					t.Fatalf("part %d rejected: %v", i, err)
				}
				if n := testkit.UTF16Len(plain); n > bot.MaxMessageUnits || n == 0 {
					t.Fatalf("part %d has %d UTF-16 units", i, n)
				}
				total += utf8.RuneCountInString(strings.ReplaceAll(plain, "\n", ""))
				if strings.HasPrefix(tc.md, "```") && !strings.HasPrefix(p, "<pre>") {
					t.Fatalf("code part %d lost its block: %.40q", i, p)
				}
			}
			want := utf8.RuneCountInString(strings.NewReplacer("\n", "", "```", "").Replace(tc.md))
			if total < want*95/100 {
				t.Fatalf("parts hold %d characters of %d: text lost", total, want)
			}
		})
	}
}

func FuzzRenderHTML(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, md string) {
		for _, part := range bot.SplitMarkdown(md, 300) {
			if _, _, err := testkit.ParseEntities(part, "HTML"); err != nil {
				t.Fatalf("rendering of %q rejected: %v\n%s", md, err, part)
			}
		}
	})
}
