package policy

import (
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/kairos-agent/kairos"
)

// Effective writes the policy in force as YAML: every section and key,
// those the file leaves out at their built-in defaults. Parsed back it
// gives the same policy, so an operator can copy a part of it into the
// file. It holds no secret: the policy names secrets, never their values.
func Effective(p *kairos.Policy) ([]byte, error) {
	if p == nil {
		p = kairos.DefaultPolicy()
	}
	b, err := yaml.MarshalWithOptions(p, yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("write the policy in force: %w", err)
	}
	return b, nil
}
