package research

import (
	"fmt"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Stages of a trace, each with its own token budget.
const (
	StagePlanner    = "planner"
	StageResearcher = "researcher"
	StageVerifier   = "verifier"
	StageModel      = "model" // the external model of tier 4
)

// Spend is what a trace has used, across resumes.
type Spend struct {
	Calls     int            `json:"calls"`  // model calls
	Tokens    int            `json:"tokens"` // prompt and answer tokens of every stage
	CostUSD   float64        `json:"cost_usd,omitempty"`
	Seconds   float64        `json:"seconds"`
	ToolCalls int            `json:"tool_calls"` // retrievals
	Rounds    int            `json:"rounds"`
	Stages    map[string]int `json:"stages,omitempty"` // tokens per stage
	// Overruns counts calls whose reported tokens went past what the
	// stage had left when the call was made (a server that ignored
	// max_tokens); research stops at the first.
	Overruns int `json:"overruns,omitempty"`
}

// stageBudget is the token budget of a stage.
func stageBudget(b kairos.ResearchBudget, stage string) int {
	switch stage {
	case StagePlanner:
		return b.Tokens.Planner
	case StageResearcher:
		return b.Tokens.Researcher
	case StageVerifier:
		return b.Tokens.Verifier
	case StageModel:
		return b.Tokens.Model
	}
	return 0
}

// tokensLeft is what a stage may still spend.
func (s *Spend) tokensLeft(b kairos.ResearchBudget, stage string) int {
	return stageBudget(b, stage) - s.Stages[stage]
}

func (s *Spend) addTokens(stage string, n int) {
	if s.Stages == nil {
		s.Stages = map[string]int{}
	}
	s.Stages[stage] += n
	s.Tokens += n
}

// overBudget is why research stopped before it was done.
type overBudget struct{ what string }

func (o *overBudget) Error() string { return "over budget: " + o.what }

// Text says what was spent, for the answer.
func (s Spend) Text(b kairos.ResearchBudget) string {
	parts := []string{
		plural(s.Calls, "model call"),
		fmt.Sprintf("%d tokens", s.Tokens),
		fmt.Sprintf("%d of %d retrievals", s.ToolCalls, b.ToolCalls),
		fmt.Sprintf("%d of %d rounds", s.Rounds, b.Rounds),
		fmt.Sprintf("%.0f s", s.Seconds),
	}
	if s.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", s.CostUSD))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
