package web

import (
	"regexp"
	"strings"
	"testing"
)

func TestTelegramHTMLAsTheChatShowsIt(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<b>Approval needed</b>\nmemory forget\n<i>Why:</i> policy", "<b>Approval needed</b>\nmemory forget\n<i>Why:</i> policy"},
		{"a &lt;b&gt; &amp; c", "a &lt;b&gt; &amp; c"},
		{"<strong>x</strong><em>y</em>", "<b>x</b><i>y</i>"},
		{"<pre>code &lt;1&gt;</pre>\nafter", `<details class="fold"><summary>Details</summary><pre>code &lt;1&gt;</pre></details>after`},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{`<a href="https://example.com/?a=1&amp;b=2">x</a>`, `<a href="https://example.com/?a=1&amp;b=2" rel="noopener noreferrer">x</a>`},
		{`<a href="javascript:alert(1)">x</a>`, "<a>x</a>"},
		{`<b onclick="x">bold`, "<b>bold</b>"},
		{"</i>stray<b><i>open", "stray<b><i>open</i></b>"},
		{"<b>a<i>b</b>c</i>", "<b>a<i>b</i></b>c"},
		{"5 < 6 and <3", "5 &lt; 6 and &lt;3"},
	} {
		if got := string(TelegramHTML(c.in)); got != c.want {
			t.Errorf("TelegramHTML(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestApprovalMessage(t *testing.T) {
	text := "<b>Approval needed</b>\nmemory {&#34;action&#34;:&#34;forget&#34;,&#34;memory_id&#34;:&#34;m1&#34;}\n<i>Why:</i> the policy requires approval for memory.forget\nExpires in 10m0s; no answer means no."
	got := string(approvalMessage(text))
	want := "<b>Approval needed</b>\n<code>memory</code> · action: forget · memory_id: m1\n<i>Why:</i> the policy requires approval for memory.forget"
	if got != want {
		t.Errorf("flat arguments:\n got %q\nwant %q", got, want)
	}
	skill := "<b>Approval needed</b>\nskill {&#34;action&#34;:&#34;create&#34;,&#34;tests&#34;:[{&#34;n&#34;:1}]}\n<i>Why:</i> a new skill\n<pre>function run() {}</pre>\nExpires in 9m59s; no answer means no."
	got = string(approvalMessage(skill))
	for _, w := range []string{`<summary>Arguments</summary><pre>{&#34;action&#34;:&#34;create&#34;`, `<summary>Details</summary><pre>function run() {}</pre>`} {
		if !strings.Contains(got, w) {
			t.Errorf("nested arguments: %q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "Expires in") {
		t.Errorf("the stale expiry stayed: %q", got)
	}
}

var (
	outTag  = regexp.MustCompile(`<[^>]*>`)
	allowed = regexp.MustCompile(`^(</?(b|i|u|s|code|pre|blockquote|summary|details|a)>|<details class="fold">|<a href="https?://[^"<>]*" rel="noopener noreferrer">)$`)
)

// FuzzTelegramHTML: whatever the text, the page gets only the kept tags,
// balanced, with no attribute but a link's http(s) href, and the words
// outside tags survive.
func FuzzTelegramHTML(f *testing.F) {
	for _, s := range []string{"<b>Approval needed</b>\n<i>Why:</i> x", "<pre>a</pre>", `<a href="https://x.y/">l</a>`, "<b><i>x</b>",
		"<<b>>", `<a href='http://a"b'>`, "&lt;&amp;&#34;", "<pre><b>x</pre></b>", "<details open>", "<b\n>x</b >"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := string(TelegramHTML(in, "Details"))
		var stack []string
		for _, tag := range outTag.FindAllString(out, -1) {
			if !allowed.MatchString(tag) {
				t.Fatalf("TelegramHTML(%q) wrote %q", in, tag)
			}
			name := strings.Trim(strings.Fields(tag)[0], "</>")
			if strings.HasPrefix(tag, "</") {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					t.Fatalf("TelegramHTML(%q) = %q: unbalanced at %q", in, out, tag)
				}
				stack = stack[:len(stack)-1]
			} else {
				stack = append(stack, name)
			}
		}
		if len(stack) > 0 {
			t.Fatalf("TelegramHTML(%q) = %q leaves %v open", in, out, stack)
		}
		if strings.ContainsAny(outTag.ReplaceAllString(out, ""), "<>\"") {
			t.Fatalf("TelegramHTML(%q) = %q leaves a bare < > or \" in the text", in, out)
		}
	})
}
