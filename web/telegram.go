package web

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// telegramTags are the tags of Telegram's HTML parse mode that a page
// keeps (as the chat shows them); a, pre and blockquote are handled
// apart.
var telegramTags = map[string]string{"b": "b", "strong": "b", "i": "i", "em": "i", "u": "u", "ins": "u",
	"s": "s", "strike": "s", "del": "s", "code": "code", "pre": "pre", "blockquote": "blockquote", "a": "a"}

var tagRe = regexp.MustCompile(`^<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]*))?)*)\s*/?>`)
var hrefRe = regexp.MustCompile(`(?i)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)

// TelegramHTML renders a message written in Telegram's HTML parse mode
// (an approval request as the bot sent it) as the chat shows it: bold,
// italic, code and links stay, every other '<' is text, each <pre> block
// (an approval's details) is folded, closed, in a <details> labelled by
// folds (the n-th block by the n-th label, the last label for the rest),
// and the tags are balanced. Nothing the text holds can add an element,
// an attribute or a script of its own.
func TelegramHTML(s string, folds ...string) template.HTML {
	var b strings.Builder
	var open []string
	pres := 0
	fold := func() string {
		if len(folds) == 0 {
			return "Details"
		}
		defer func() { pres++ }()
		return folds[min(pres, len(folds)-1)]
	}
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			i = len(s)
		}
		b.WriteString(template.HTMLEscapeString(html.UnescapeString(s[:i])))
		s = s[i:]
		if s == "" {
			break
		}
		m := tagRe.FindStringSubmatch(s)
		name := ""
		if m != nil {
			name = telegramTags[strings.ToLower(m[2])]
		}
		if name == "" {
			b.WriteString("&lt;")
			s = s[1:]
			continue
		}
		s = s[len(m[0]):]
		if m[1] == "/" {
			open = closeTag(&b, open, name)
			if name == "pre" { // the fold is a block: the line break after it is already there
				s = strings.TrimPrefix(s, "\n")
			}
			continue
		}
		label := ""
		if name == "pre" {
			label = fold()
		}
		b.WriteString(openTag(name, m[3], label))
		open = append(open, name)
	}
	for len(open) > 0 {
		open = closeTag(&b, open, open[len(open)-1])
	}
	return template.HTML(b.String())
}

// openTag writes a kept tag; a link keeps only an http(s) href.
func openTag(name, attrs, fold string) string {
	switch name {
	case "pre":
		return `<details class="fold"><summary>` + template.HTMLEscapeString(fold) + `</summary><pre>`
	case "a":
		if m := hrefRe.FindStringSubmatch(attrs); m != nil {
			u, err := url.Parse(html.UnescapeString(m[1] + m[2] + m[3]))
			if err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
				return `<a href="` + template.HTMLEscapeString(u.String()) + `" rel="noopener noreferrer">`
			}
		}
		return `<a>`
	}
	return "<" + name + ">"
}

// closeTag closes name and whatever opened inside it; a close tag that
// matches nothing open is dropped.
func closeTag(b *strings.Builder, open []string, name string) []string {
	at := -1
	for i := len(open) - 1; i >= 0; i-- {
		if open[i] == name {
			at = i
			break
		}
	}
	if at < 0 {
		return open
	}
	for i := len(open) - 1; i >= at; i-- {
		if open[i] == "pre" {
			b.WriteString("</pre></details>")
		} else {
			b.WriteString("</" + open[i] + ">")
		}
	}
	return open[:at]
}

// expiresLine is the last line of an approval request as the bot wrote
// it when it was sent ("Expires in 10m0s; no answer means no."): the page
// says when it expires, from the request's own time, or nothing once it
// is decided.
var expiresLine = regexp.MustCompile(`\n?Expires in [^\n]*\s*$`)

// approvalText is an approval request's text without its stale expiry.
func approvalText(text string) string { return expiresLine.ReplaceAllString(text, "") }

// callLine is an approval request's second line: the tool and its
// arguments as JSON (clipped), HTML-escaped.
var callLine = regexp.MustCompile(`^([A-Za-z0-9_.-]+) (\{.*)$`)

// approvalMessage renders an approval request as the chat showed it,
// without the stale expiry, and with the call's arguments written as
// "key: value" pairs (or, when they are not flat, folded).
func approvalMessage(text string) template.HTML {
	lines := strings.Split(approvalText(text), "\n")
	folds := []string{"Details"}
	if len(lines) > 1 {
		if m := callLine.FindStringSubmatch(lines[1]); m != nil {
			args := argsText(html.UnescapeString(m[2]))
			if strings.HasPrefix(args, "\n<pre>") {
				folds = []string{"Arguments", "Details"}
			}
			lines[1] = "<code>" + m[1] + "</code>" + args
		}
	}
	return TelegramHTML(strings.Join(lines, "\n"), folds...)
}

// argsText writes flat JSON arguments as " · key: value" pairs, in the
// message's HTML; anything else goes folded as it is.
func argsText(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		keys := slices.Sorted(maps.Keys(m))
		var b strings.Builder
		for _, k := range keys {
			switch v := m[k].(type) {
			case string, float64, bool, nil:
				fmt.Fprintf(&b, " · %s: %s", html.EscapeString(k), html.EscapeString(fmt.Sprint(v)))
			default:
				return "\n<pre>" + html.EscapeString(args) + "</pre>"
			}
		}
		return b.String()
	}
	return "\n<pre>" + html.EscapeString(args) + "</pre>"
}
