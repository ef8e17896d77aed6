package code_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/code"
)

func TestFormatStats(t *testing.T) {
	st := &kairos.CodeStats{Total: 12, Successes: 9, Failures: 3, AvgDurationMS: 123.6, Categories: []kairos.CategoryCount{
		{Category: "syntax", Count: 3}, {Category: "timeout", Count: 2}, {Category: "type", Count: 2},
		{Category: "network", Count: 1}, {Category: "budget", Count: 1}, {Category: "memory", Count: 1},
	}}
	got := code.FormatStats(st)
	for _, want := range []string{"(7 days)", "Total: 12", "Success: 9", "Failed: 3", "Avg duration: 124 ms", "• syntax: 3", "• budget: 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("FormatStats lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "memory") {
		t.Errorf("more than %d categories shown:\n%s", code.StatsCategories, got)
	}
	empty := code.FormatStats(&kairos.CodeStats{})
	if !strings.Contains(empty, "Total: 0") || strings.Contains(empty, "Top error") {
		t.Errorf("empty stats:\n%s", empty)
	}
	if code.FormatStats(nil) != empty {
		t.Error("nil stats differ from empty stats")
	}
}

// fencesBalanced checks that every ``` in text is one of the fences
// FormatFailure writes (on a line of its own, "```" or "```javascript")
// and that they pair up.
func fencesBalanced(text string) error {
	open := false
	for i, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "```") {
			continue
		}
		switch {
		case !open && (line == "```javascript" || line == "```"):
			open = true
		case open && line == "```":
			open = false
		default:
			return fmt.Errorf("line %d: stray fence in %q", i+1, line)
		}
	}
	if open {
		return fmt.Errorf("unclosed fence")
	}
	return nil
}

func TestFormatFailures(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("CET", 3600))
	fs := []*kairos.CodeExecution{
		{ID: "0123456789abcdef", ErrorCategory: kairos.CatSyntax, CreatedAt: at,
			Code:   "const md = \"```js\\nx\\n```\";\n````\nconsole.log(md)",
			Stderr: "SyntaxError: unexpected ``` in template"},
		{ID: "fedcba9876543210", ErrorCategory: "", CreatedAt: at,
			Code: strings.Repeat("é", 600), Stderr: strings.Repeat("a", 400) + "THE END"},
		{ID: "weird_*id*", ErrorCategory: "bad_*cat*", Code: "x", Stderr: ""},
	}
	got := code.FormatFailures(fs)
	if err := fencesBalanced(got); err != nil {
		t.Fatalf("%v:\n%s", err, got)
	}
	for _, want := range []string{
		"❌ 01234567\n", "Category: syntax", "Time: 2026-03-01 08:30 UTC", "‵‵‵js", "‵‵‵‵", "unexpected ‵‵‵ in template",
		"❌ fedcba98\n", "Category: unknown", "THE END", "(no error text)", "Category: bad--cat-",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("FormatFailures lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "weird_*id*") || strings.Contains(got, "*cat*") {
		t.Errorf("Markdown outside the code blocks:\n%s", got)
	}
	second := code.FormatFailure(fs[1])
	if n := strings.Count(second, "é"); n != code.FailureCodeRunes {
		t.Errorf("code shown: %d runes, want %d", n, code.FailureCodeRunes)
	}
	if strings.Count(second, "a") > code.FailureErrorRunes {
		t.Errorf("error longer than %d runes:\n%s", code.FailureErrorRunes, second)
	}
	if code.FormatFailures(nil) != "No recent failures! 🎉" || code.FormatFailures([]*kairos.CodeExecution{nil}) != "No recent failures! 🎉" {
		t.Error("no failures: wrong text")
	}
}

func FuzzFormatFailure(f *testing.F) {
	f.Add("id", "syntax", "```\ncode\n```", "err ```")
	f.Add("", "", "``", "`")
	f.Add("x", "y", strings.Repeat("`", 700), strings.Repeat("`", 400))
	f.Add("\xff", "\x00", "a\n```javascript\nb", "é```")
	f.Fuzz(func(t *testing.T, id, cat, codeText, stderr string) {
		out := code.FormatFailure(&kairos.CodeExecution{ID: id, ErrorCategory: cat, Code: codeText, Stderr: stderr})
		if err := fencesBalanced(out); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if utf8.ValidString(codeText) && utf8.ValidString(stderr) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from valid input:\n%q", out)
		}
	})
}

func ExampleFormatStats() {
	fmt.Print(code.FormatStats(&kairos.CodeStats{
		Total: 10, Successes: 7, Failures: 3, AvgDurationMS: 84.4,
		Categories: []kairos.CategoryCount{{Category: "syntax", Count: 2}, {Category: "timeout", Count: 1}},
	}))
	// Output:
	// 📊 Code execution stats (7 days)
	//
	// Total: 10
	// ✅ Success: 7
	// ❌ Failed: 3
	// ⏱ Avg duration: 84 ms
	//
	// Top error categories:
	//   • syntax: 2
	//   • timeout: 1
}

func ExampleFormatFailures() {
	fmt.Println(code.FormatFailures([]*kairos.CodeExecution{{
		ID: "3f2a9c1e-7d4b-4e0a-9c55-0b1d2e3f4a5b", ErrorCategory: "reference",
		CreatedAt: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC),
		Code:      "output(totl)",
		Stderr:    "ReferenceError: totl is not defined",
	}}))
	// Output:
	// ❌ 3f2a9c1e
	// Category: reference
	// Time: 2026-03-01 09:30 UTC
	//
	// Code:
	// ```javascript
	// output(totl)
	// ```
	//
	// Error:
	// ```
	// ReferenceError: totl is not defined
	// ```
}

func ExampleExtractCode() {
	fmt.Println(code.ExtractCode("Here it is:\n```js\noutput(6 * 7)\n```"))
	// Output: output(6 * 7)
}
