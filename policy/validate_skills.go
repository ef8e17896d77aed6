package policy

import "github.com/kairos-agent/kairos"

// Bounds of the skills section.
const (
	MaxSkillVersionsKept = 100
	MaxSkillFailures     = 100
	MaxSkillsOffered     = 64
	MaxSkillsPerUser     = 1000
	MaxSkillTests        = 100
)

func validateSkills(c *checker, s *kairos.SkillsPolicy) {
	for _, b := range []struct {
		path      string
		v, lo, hi int
	}{
		{"skills.versions_kept", s.VersionsKept, 1, MaxSkillVersionsKept},
		{"skills.max_failures", s.MaxFailures, 1, MaxSkillFailures},
		{"skills.max_offered", s.MaxOffered, 0, MaxSkillsOffered},
		{"skills.max_per_user", s.MaxPerUser, 1, MaxSkillsPerUser},
		{"skills.max_tests", s.MaxTests, 1, MaxSkillTests},
	} {
		if b.v < b.lo || b.v > b.hi {
			c.add(b.path, "must be between %d and %d, got %d", b.lo, b.hi, b.v)
		}
	}
}
