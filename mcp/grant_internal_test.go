package mcp

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGrantTargetPattern: two calls of a tool share a grant target
// exactly when the arguments that name something are equal; free text
// never decides it; the label shows which are which.
func TestGrantTargetPattern(t *testing.T) {
	names := []any{"light.kitchen", "light.hall", 3.0, 4.0, true, false, nil, []any{"a"}, map[string]any{"x": 1.0}}
	texts := []any{"buy milk", "turn it off please", strings.Repeat("x", maxNameLen+1), "", []any{"two words"}}
	r := rand.New(rand.NewPCG(7, 33))
	pick := func(xs []any) any { return xs[r.IntN(len(xs))] }
	for i := 0; i < 500; i++ {
		id1, id2 := pick(names), pick(names)
		a := map[string]any{"entity_id": id1, "note": pick(texts)}
		b := map[string]any{"entity_id": id2, "note": pick(texts)}
		ta, la := grantTarget("ha__call", a)
		tb, _ := grantTarget("ha__call", b)
		same := fmt.Sprint(argPattern(id1)) == fmt.Sprint(argPattern(id2))
		if (ta == tb) != same {
			t.Fatalf("%v → %q, %v → %q: same target %v, want %v", a, ta, b, tb, ta == tb, same)
		}
		if !strings.Contains(ta, "note=*") || !strings.Contains(la, "note any text") {
			t.Fatalf("free text decided the target: %q (%q)", ta, la)
		}
		if other, _ := grantTarget("ha__delete", a); other == ta {
			t.Fatalf("another tool has the same target %q", ta)
		}
	}
	if got, _ := grantTarget("notes__add_note", map[string]any{"text": "buy milk"}); got != "notes__add_note(text=*)" {
		t.Errorf("add_note target %q", got)
	}
	if got, label := grantTarget("notes__list", nil); got != "notes__list()" || label != "notes__list" {
		t.Errorf("no arguments: %q, %q", got, label)
	}
	s := sentence("notes", "add_note", "Adds a note to the user's notebook.", map[string]any{"text": "buy milk"})
	if s != "Use add_note on the notes server (“Adds a note to the user's notebook”) with text \"buy milk\"?" {
		t.Errorf("sentence %q", s)
	}
}
