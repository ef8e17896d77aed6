package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/tools"
)

// TestArithmeticIsMentioned: a calculation written out is seen whatever
// its numbers, operator, spacing and the words around it (generated:
// every operand pair × operator form × frame), and numbers that are no
// calculation (dates, times, ranges, sizes, phone numbers, versions,
// counts) are not.
func TestArithmeticIsMentioned(t *testing.T) {
	operands := [][2]string{{"17", "23"}, {"1,234", "5.5"}, {"0.75", "12"}, {"365", "24"}, {"2", "(3"}}
	forms := []string{"%s*%s", "%s * %s", "%s×%s", "%s ÷ %s", "%s^%s", "%s+%s", "%s + %s", "%s - %s", "%s / %s",
		"%s x %s", "%s times %s", "%s plus %s", "%s minus %s", "%s divided by %s", "%s multiplied by %s",
		"%s to the power of %s", "%s raised to the power of %s", "%s mod %s"}
	frames := []string{"what's %s", "%s?", "quick one: %s please", "cuánto es %s", "how much is %s in total",
		"(%s)", "calc %s!!", "%s =", "tell me %s, then the weather"}
	seen := func(msg string) bool { return tools.MentionsArithmetic(tools.NewMessage(msg)) }
	for _, o := range operands {
		for _, f := range forms {
			if o[1][0] == '(' && f[len(f)-2:] == "%s" && f[len(f)-3] >= 'a' {
				continue // "times (3" is no form anyone writes
			}
			expr := fmt.Sprintf(f, o[0], o[1])
			for _, fr := range frames {
				if msg := fmt.Sprintf(fr, expr); !seen(msg) {
					t.Errorf("%q: the calculation %q not seen", msg, expr)
				}
			}
		}
	}
	for _, msg := range []string{"12 squared", "what is 5 factorial", "3 cubed?", "15% of 240", "tip: 18 % of 64.50",
		"sqrt(2)", "√81", "what's 1+1"} {
		if !seen(msg) {
			t.Errorf("%q: the calculation not seen", msg)
		}
	}
	for _, msg := range []string{"hello", "I have 3 cats", "meet on 2026-11-28", "lunch 11/28?", "10-11am works",
		"3-5 days shipping", "call +1 555-1234", "the 1920x1080 screen", "v1.2.3 is out", "at 17:30",
		"room 101", "4+ stars only", "C++ or Go", "battery at 15%", "3 times a day", "two times two",
		"minus 5 degrees outside", "order #4521 shipped", "top 10 films", "covid-19 rules", "page 3/4 of the pdf"} {
		if seen(msg) {
			t.Errorf("%q: a calculation seen where there is none", msg)
		}
	}
}

// FuzzMentionsArithmetic: any text is judged without a panic, and a text
// with no digit and no root sign is never a calculation.
func FuzzMentionsArithmetic(f *testing.F) {
	for _, s := range []string{"17*23", "15% of 240", "√", "1,", "9 divided by", "2^", "x", "é1×2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := tools.MentionsArithmetic(tools.NewMessage(s))
		digit := false
		for _, r := range s {
			if r >= '0' && r <= '9' {
				digit = true
			}
		}
		root := strings.Contains(strings.ToLower(s), "sqrt") || strings.ContainsRune(s, '√')
		if got && !digit && !root {
			t.Fatalf("%q: a calculation without a number", s)
		}
	})
}
