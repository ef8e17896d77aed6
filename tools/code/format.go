package code

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// Limits of the bot's /codestats and /codefailures texts.
const (
	StatsCategories    = 5   // top categories shown by FormatStats
	FailureCodeRunes   = 500 // code shown per failure
	FailureErrorRunes  = 300 // error shown per failure
	failureIDRunes     = 8
	noFailuresMessage  = "No recent failures! 🎉"
	formatTimeLayout   = "2006-01-02 15:04 UTC"
	fenceReplacement   = "‵" // U+2035 REVERSED PRIME stands in for a backquote of a run
	minFenceBreakerRun = 3
)

// FormatStats renders /codestats as Markdown: the totals of the last 7
// days, successes, failures, average duration and the top error
// categories.
func FormatStats(st *kairos.CodeStats) string {
	if st == nil {
		st = &kairos.CodeStats{}
	}
	var b strings.Builder
	b.WriteString("📊 Code execution stats (7 days)\n\n")
	fmt.Fprintf(&b, "Total: %d\n", st.Total)
	fmt.Fprintf(&b, "✅ Success: %d\n", st.Successes)
	fmt.Fprintf(&b, "❌ Failed: %d\n", st.Failures)
	fmt.Fprintf(&b, "⏱ Avg duration: %d ms\n", int64(math.Round(st.AvgDurationMS)))
	if len(st.Categories) == 0 {
		return b.String()
	}
	b.WriteString("\nTop error categories:\n")
	for i, c := range st.Categories {
		if i == StatsCategories {
			break
		}
		fmt.Fprintf(&b, "  • %s: %d\n", plainWord(c.Category), c.Count)
	}
	return b.String()
}

// FormatFailures renders /codefailures as Markdown: for each failure its
// short id, category, time (UTC), code in a fenced block (at most 500
// characters) and error (the last 300 characters of stderr, where the
// error is). Runs of three or more backquotes inside code and error are
// replaced by as many ‵ (U+2035), so they cannot close a fence.
func FormatFailures(fs []*kairos.CodeExecution) string {
	if len(fs) == 0 {
		return noFailuresMessage
	}
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		if f != nil {
			parts = append(parts, FormatFailure(f))
		}
	}
	if len(parts) == 0 {
		return noFailuresMessage
	}
	return strings.Join(parts, "\n\n")
}

// FormatFailure renders one failure as FormatFailures does.
func FormatFailure(f *kairos.CodeExecution) string {
	var b strings.Builder
	fmt.Fprintf(&b, "❌ %s\n", plainWord(headRunes(f.ID, failureIDRunes)))
	cat := f.ErrorCategory
	if cat == "" {
		cat = "unknown"
	}
	fmt.Fprintf(&b, "Category: %s\n", plainWord(cat))
	if !f.CreatedAt.IsZero() {
		fmt.Fprintf(&b, "Time: %s\n", f.CreatedAt.UTC().Format(formatTimeLayout))
	}
	code := strings.TrimRight(f.Code, "\n")
	if utf8.RuneCountInString(code) > FailureCodeRunes {
		code = headRunes(code, FailureCodeRunes) + "..."
	}
	b.WriteString("\nCode:\n```javascript\n")
	b.WriteString(defuseFences(code))
	b.WriteString("\n```\n")
	errText := strings.TrimSpace(f.Stderr)
	if errText == "" {
		errText = "(no error text)"
	}
	if utf8.RuneCountInString(errText) > FailureErrorRunes {
		errText = "..." + tailRunes(errText, FailureErrorRunes)
	}
	b.WriteString("\nError:\n```\n")
	b.WriteString(defuseFences(errText))
	b.WriteString("\n```")
	return b.String()
}

// defuseFences replaces every run of three or more backquotes with as
// many ‵, so text inside a ``` block cannot end it.
func defuseFences(s string) string {
	if !strings.Contains(s, "```") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i >= minFenceBreakerRun {
			b.WriteString(strings.Repeat(fenceReplacement, j-i))
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

// plainWord keeps letters, digits, '-' and '.' so that an id or a category
// outside a code block cannot carry Markdown.
func plainWord(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, s)
}

func headRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

func tailRunes(s string, n int) string {
	c := utf8.RuneCountInString(s)
	if c <= n {
		return s
	}
	skip := c - n
	i := 0
	for k := range s {
		if i == skip {
			return s[k:]
		}
		i++
	}
	return ""
}
