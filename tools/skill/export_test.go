package skill

import "github.com/kairos-agent/kairos"

// Risks exposes the risk classification of a version with no test run
// to the external tests.
func (s *Skills) Risks(p *kairos.Policy, v *kairos.SkillVersion) []string { return s.risks(p, v, nil) }
