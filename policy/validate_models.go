package policy

import (
	"math"
	"strings"

	"github.com/kairos-agent/kairos"
)

// ToolCallingModes are the values of models.<name>.tool_calling.
var ToolCallingModes = []string{kairos.ToolCallingNative, kairos.ToolCallingPrompted, kairos.ToolCallingOff}

// ThinkingModes are the values of models.<name>.thinking.
var ThinkingModes = []string{kairos.ThinkingTemplate, kairos.ThinkingTagged}

// MaxContextWindow bounds models.<name>.context_window (no model comes
// near ten million tokens; a larger number is a typo).
const MaxContextWindow = 10_000_000

func validateModels(c *checker, models map[string]kairos.ModelSpec) {
	for _, name := range sortedKeys(models) {
		path := "models." + name
		if strings.TrimSpace(name) == "" || len(name) > 200 {
			c.addKey(path, "a model name is 1 to 200 characters, as the server spells it")
		}
		s := models[name]
		if s.ContextWindow < 0 || s.ContextWindow > MaxContextWindow {
			c.add(path+".context_window", "must be between 0 (unknown) and %d tokens, got %d", MaxContextWindow, s.ContextWindow)
		}
		if s.MaxOutputTokens < 0 {
			c.add(path+".max_output_tokens", "must not be negative, got %d", s.MaxOutputTokens)
		}
		if s.ContextWindow > 0 && s.MaxOutputTokens >= s.ContextWindow {
			c.add(path+".max_output_tokens", "%d leaves no room for the prompt in a context window of %d", s.MaxOutputTokens, s.ContextWindow)
		}
		if s.ToolCalling != "" {
			c.enum(path+".tool_calling", s.ToolCalling, ToolCallingModes)
		}
		if s.Thinking != "" {
			c.enum(path+".thinking", s.Thinking, ThinkingModes)
		}
		if s.Price != nil {
			validatePrice(c, path+".price", s.Price)
		}
	}
}

func validatePrice(c *checker, path string, p *kairos.ModelPrice) {
	for _, f := range []struct {
		key string
		v   float64
	}{
		{"input", p.Input}, {"cached_input", p.CachedInput}, {"output", p.Output},
		{"audio_per_minute", p.AudioPerMinute}, {"per_image", p.PerImage},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			c.add(path+"."+f.key, "a price must be a number of US dollars, zero or more, got %v", f.v)
		}
	}
}
