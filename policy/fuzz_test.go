package policy

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, a policy
// it accepts must pass Validate, and every error it reports must carry the
// file name.
func FuzzParse(f *testing.F) {
	catchPanics = false
	f.Cleanup(func() { catchPanics = true })
	if data, err := os.ReadFile("../deploy/policy.example.yaml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"", "clock:\n  mode: off\n", "clokc: 1\n", "- a\n", "a: [1\n", "clock: {checkins: {rules: [{id: a, then: {offer_recap: true}}]}}\n",
		"budgets:\n  per_verb:\n    BUILD: &b {time_budget_ms: 1}\n    UPDATE: {<<: *b}\n", "x: &a [*a]\n", "clock:\n  mode: *nope\n",
		"access: {operators: [99999999999999999999]}\n", "clock: {ambiguity_threshold_hours: .nan}\n", "a: 1\n---\nb: 2\n",
		"agent: !!map {model: !!str 5}\n", "? complex\n: key\n", "sessions: {auto_divide_time: 12:00}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err == nil {
			if p == nil {
				t.Fatal("nil policy without error")
			}
			if verr := Validate(p); verr != nil {
				t.Fatalf("accepted policy fails Validate: %v", verr)
			}
			return
		}
		var errs Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("error is not a non-empty Errors: %T %v", err, err)
		}
		for _, e := range errs {
			if !strings.HasPrefix(e.Error(), "f.yaml") || e.Msg == "" {
				t.Fatalf("bad error %q", e.Error())
			}
		}
	})
}
