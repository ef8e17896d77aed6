package kairos_test

import (
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestBuiltinModelLookup(t *testing.T) {
	tests := []struct {
		name   string
		found  bool
		window int
		input  float64
	}{
		{"gpt-4o-mini", true, 128000, 0.15},
		{"gpt-4o-mini-2024-07-18", true, 128000, 0.15},
		{"openai/gpt-4o", true, 128000, 2.50},
		{"GPT-4.1-mini", true, 1047576, 0.40},
		{"gpt-4.1-mini-2025-04-14", true, 1047576, 0.40},
		{"deepseek/deepseek-chat", true, 131072, 0.28},
		{"gpt-5-mini-2025-08-07", true, 400000, 0.25},
		{"gpt-5.4-mini", true, 0, 0.75},
		{"anthropic/claude-sonnet-4.5", true, 200000, 3.00},
		{"claude-sonnet-4-5-20250929", true, 200000, 3.00},
		{"claude-haiku-4-5", true, 200000, 1.00},
		{"claude-opus-4-1-20250805", true, 200000, 15.00},
		{"claude-haiku-5-5", false, 0, 0}, // priced by prompt length: not in the table
		{"gemini-2.0-flash", true, 1048576, 0.10},
		{"llama-3.3-70b-versatile", true, 131072, 0.59},
		{"gpt-4.1-turbo", false, 0, 0}, // not a date suffix: no guess
		{"llama3.2:3b", false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := kairos.BuiltinModel(tc.name)
			if ok != tc.found || s.ContextWindow != tc.window {
				t.Fatalf("BuiltinModel(%q) = %+v, %v", tc.name, s, ok)
			}
			if tc.found && (s.Price == nil || s.Price.Input != tc.input) {
				t.Errorf("price %+v, want input %v", s.Price, tc.input)
			}
		})
	}
}

// TestBuiltinModelIsACopy: changing what Model returns does not change the
// table.
func TestBuiltinModelIsACopy(t *testing.T) {
	s, _ := kairos.BuiltinModel("gpt-4o")
	s.Price.Input = 99
	*s.Vision = false
	again, _ := kairos.BuiltinModel("gpt-4o")
	if again.Price.Input != 2.50 || !again.HasVision() {
		t.Errorf("table changed: %+v %+v", again, again.Price)
	}
}

func TestPolicyModelNil(t *testing.T) {
	var p *kairos.Policy
	if s, ok := p.Model("whisper-1"); !ok || s.Price == nil || s.Price.AudioPerMinute != 0.006 {
		t.Errorf("nil policy: %+v %v", s, ok)
	}
	if s, _ := kairos.DefaultPolicy().Model("x"); s.ToolMode() != kairos.ToolCallingNative {
		t.Errorf("default tool mode %q", s.ToolMode())
	}
}
