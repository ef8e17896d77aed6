package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/policy"
)

// TestModelCheckVisionMustNameTheColour: vision is "ok" only when the
// answer names the red of the square (any answer passed); otherwise it is
// uncertain, and --write writes a comment, not a value.
func TestModelCheckVisionMustNameTheColour(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		answer string
		ok     bool
	}{
		{"Red.", true}, {"It is red", true}, {"A bright crimson square", true}, {"Rouge", true}, {"Rot.", true}, {"红色", true},
		{"Blue.", false}, {"It is a square.", false}, {"I can't see images.", false}, {"Colour", false}, {"", false},
		{"Credit card", false}, {"Bored", false}, {"Green", false},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			e := newEnv(t)
			e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
				if len(r.Messages) > 1 && len(r.Messages[1].Images) > 0 {
					return testkit.TextReply(tc.answer)
				}
				return probeAnswers(r)
			})
			if code := e.main().Main(context.Background(), []string{"model", "check", "--write"}); code != 0 {
				t.Fatalf("exit %d:\n%s", code, e.logs.String())
			}
			line := lineOf(t, e.logs.String(), "vision")
			p, err := policy.Parse("written.yaml", []byte(e.out.String()))
			if err != nil {
				t.Fatalf("--write output is not a valid policy:\n%s\n%v", e.out.String(), err)
			}
			spec, _ := p.Model("test-model")
			if tc.ok {
				if !strings.Contains(line, "ok, said") || spec.Vision == nil || !*spec.Vision {
					t.Fatalf("line %q, written vision %v:\n%s", line, spec.Vision, e.out.String())
				}
				return
			}
			if !strings.Contains(line, "uncertain") || spec.Vision != nil || !strings.Contains(e.out.String(), "# vision: uncertain") {
				t.Fatalf("line %q, written vision %v:\n%s", line, spec.Vision, e.out.String())
			}
		})
	}
}

// TestModelCheckToolsMissedOnceIsUncertain: a model that made no call to
// the tool probe, natively or prompted, is uncertain, not tool_calling:
// off (which --write wrote while exiting 0, hiding every tool).
func TestModelCheckToolsMissedOnceIsUncertain(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if len(r.Tools) > 0 || strings.Contains(r.SystemPrompt(), "<tool_call>") {
			return testkit.TextReply("It is sunny in Paris.")
		}
		return probeAnswers(r)
	})
	if code := e.main().Main(context.Background(), []string{"model", "check", "--write"}); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.logs.String())
	}
	if l := lineOf(t, e.logs.String(), "tools"); !strings.Contains(l, "uncertain: the model made no native call") {
		t.Errorf("tools line %q", l)
	}
	p, err := policy.Parse("written.yaml", []byte(e.out.String()))
	if err != nil {
		t.Fatalf("--write output is not a valid policy:\n%s\n%v", e.out.String(), err)
	}
	if spec, _ := p.Model("test-model"); spec.ToolCalling != "" || !strings.Contains(e.out.String(), "# tool_calling: uncertain") {
		t.Fatalf("written tool_calling %q:\n%s", spec.ToolCalling, e.out.String())
	}
}
