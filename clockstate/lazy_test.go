package clockstate

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// lazyRules returns, for each rule of the table that compiles its
// regexp at first use, whether it has, and a func that wakes it.
func lazyRules() (compiled []bool, wake []func() bool) {
	for _, r := range allRules {
		switch x := r.r.(type) {
		case spanRule:
			compiled = append(compiled, x.made)
			wake = append(wake, func() bool { return x.get() != nil })
		case lazyRule:
			compiled = append(compiled, x.made)
			wake = append(wake, func() bool { return x.get() != nil && x.get().RegExp != nil })
		}
	}
	return compiled, wake
}

func compiledSpans() int {
	c, _ := lazyRules()
	n := 0
	for _, ok := range c {
		if ok {
			n++
		}
	}
	return n
}

// lazyChild, when set, makes TestParserRulesCompileAtFirstUse check a fresh
// process: one in which no other test has parsed yet.
const lazyChild = "KAIROS_TEST_LAZY_CHILD"

// TestParserRulesCompileAtFirstUse: the parser's rules (the span rules and
// the olebedev/when ones) do not compile their regexps at start-up, a
// text without their triggers (a plain message) compiles none of them,
// and every one of them compiles when woken.
func TestParserRulesCompileAtFirstUse(t *testing.T) {
	if os.Getenv(lazyChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestParserRulesCompileAtFirstUse$", "-test.v")
		cmd.Env = append(os.Environ(), lazyChild+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fresh process: %v\n%s", err, out)
		}
		return
	}
	c, wake := lazyRules()
	total := len(c)
	if total < len(allRules)-5 {
		t.Fatalf("%d of the table's %d rules compile at first use, want all but a few", total, len(allRules))
	}
	if n := compiledSpans(); n != 0 {
		t.Fatalf("%d of %d rules' regexps compiled at start-up, want 0", n, total)
	}
	ref := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	for _, text := range []string{"hello, how are you?", "thanks!", "what do you think of Go generics"} {
		ParseAnchoredTime(text, "Europe/Berlin", ref)
	}
	if n := compiledSpans(); n != 0 {
		t.Errorf("plain messages compiled %d of %d rules' regexps, want 0", n, total)
	}
	if r := ParseAnchoredTime("every other Tuesday at 7:30:15 pm", "Europe/Berlin", ref); r.Kind == "" {
		t.Errorf("a time phrase parsed to nothing")
	}
	if n := compiledSpans(); n == 0 || n == total {
		t.Errorf("a time phrase compiled %d of %d rules' regexps, want some, not all", n, total)
	}
	for i, w := range wake {
		if !w() {
			t.Fatalf("lazy rule %d: no regexp", i)
		}
	}
	if n := compiledSpans(); n != total {
		t.Fatalf("%d of %d compiled after waking each", n, total)
	}
}
