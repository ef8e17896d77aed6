package policy_test

import (
	"testing"

	"github.com/kairos-agent/kairos/policy"
)

func TestModelsSectionErrors(t *testing.T) {
	checkParseErrors(t, []parseErrorCase{
		{"unknown key", "models:\n  llama3.2:3b:\n    context: 8192\n",
			[]string{`policy.yaml:3:5: unknown key "context" in models.llama3.2:3b`}},
		{"unknown price key", "models:\n  m:\n    price: {input: 1, outptu: 2}\n",
			[]string{`policy.yaml:3:23: unknown key "outptu" in models.m.price, did you mean "output"?`}},
		{"tool_calling enum", "models:\n  m:\n    tool_calling: prompt\n",
			[]string{`policy.yaml:3:19: models.m.tool_calling: "prompt" is not one of native, prompted, off, did you mean "prompted"?`}},
		{"thinking enum", "models:\n  m:\n    thinking: templates\n",
			[]string{`policy.yaml:3:15: models.m.thinking: "templates" is not one of template, tagged, did you mean "template"?`}},
		{"negative price", "models:\n  m:\n    price: {input: -1, output: 2}\n",
			[]string{`policy.yaml:3:20: models.m.price.input: a price must be a number of US dollars, zero or more, got -1`}},
		{"negative window", "models:\n  m: {context_window: -5}\n",
			[]string{`policy.yaml:2:23: models.m.context_window: must be between 0 (unknown) and 10000000 tokens, got -5`}},
		{"output over window", "models:\n  m: {context_window: 4096, max_output_tokens: 4096}\n",
			[]string{`policy.yaml:2:48: models.m.max_output_tokens: 4096 leaves no room for the prompt in a context window of 4096`}},
		{"vision type", "models:\n  m: {vision: yes}\n",
			[]string{`policy.yaml:2:15: models.m.vision: expected true or false, got a string "yes" (YAML 1.2: write true or false)`}},
	})
}

// TestModelsSectionMerge: the policy's entry wins key by key over the
// built-in table, and an unknown model is what the policy says.
func TestModelsSectionMerge(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte(`models:
  gpt-4o-mini: {tool_calling: prompted}
  llama3.2:3b: {context_window: 8192, tool_calling: prompted, vision: false, max_output_tokens: 1024}
  gpt-4o:
    price: {input: 1, output: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	mini, ok := p.Model("gpt-4o-mini")
	if !ok || mini.ToolMode() != "prompted" || mini.ContextWindow != 128000 || mini.Price == nil || mini.Price.Input != 0.15 {
		t.Errorf("gpt-4o-mini = %+v, %v", mini, ok)
	}
	local, ok := p.Model("llama3.2:3b")
	if !ok || local.ContextWindow != 8192 || local.MaxOutputTokens != 1024 || local.HasVision() || local.Price != nil {
		t.Errorf("llama3.2:3b = %+v, %v", local, ok)
	}
	big, _ := p.Model("gpt-4o")
	if big.Price.Input != 1 || big.Price.Output != 2 || big.Price.CachedInput != 0 || !big.HasVision() {
		t.Errorf("gpt-4o = %+v price %+v", big, big.Price)
	}
	if _, ok := p.Model("my-finetune"); ok {
		t.Error("an unknown model is reported as known")
	}
}
