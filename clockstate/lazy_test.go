package clockstate

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// spanRules returns the span rules of the table.
func spanRules() []spanRule {
	var out []spanRule
	for _, r := range allRules {
		if s, ok := r.r.(spanRule); ok {
			out = append(out, s)
		}
	}
	return out
}

func compiledSpans() int {
	n := 0
	for _, s := range spanRules() {
		if s.re != nil {
			n++
		}
	}
	return n
}

// lazyChild, when set, makes TestSpanRulesCompileAtFirstUse check a fresh
// process: one in which no other test has parsed yet.
const lazyChild = "KAIROS_TEST_LAZY_CHILD"

// TestSpanRulesCompileAtFirstUse: the span rules' regexps are not compiled
// at start-up, a text without their triggers (a plain message) compiles
// none of them, and every one of them compiles when woken.
func TestSpanRulesCompileAtFirstUse(t *testing.T) {
	if os.Getenv(lazyChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSpanRulesCompileAtFirstUse$", "-test.v")
		cmd.Env = append(os.Environ(), lazyChild+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fresh process: %v\n%s", err, out)
		}
		return
	}
	total := len(spanRules())
	if total < 40 {
		t.Fatalf("%d span rules in the table, want the whole table (40 or more)", total)
	}
	if n := compiledSpans(); n != 0 {
		t.Fatalf("%d of %d span regexps compiled at start-up, want 0", n, total)
	}
	ref := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	for _, text := range []string{"hello, how are you?", "thanks!", "what do you think of Go generics"} {
		ParseAnchoredTime(text, "Europe/Berlin", ref)
	}
	if n := compiledSpans(); n != 0 {
		t.Errorf("plain messages compiled %d of %d span regexps, want 0", n, total)
	}
	if r := ParseAnchoredTime("every other Tuesday at 7:30:15 pm", "Europe/Berlin", ref); r.Kind == "" {
		t.Errorf("a time phrase parsed to nothing")
	}
	if n := compiledSpans(); n == 0 || n == total {
		t.Errorf("a time phrase compiled %d of %d span regexps, want some, not all", n, total)
	}
	for i, s := range spanRules() {
		if s.get() == nil {
			t.Fatalf("span rule %d: no regexp", i)
		}
	}
	if n := compiledSpans(); n != total {
		t.Fatalf("%d of %d compiled after waking each", n, total)
	}
}
