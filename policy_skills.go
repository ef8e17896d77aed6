package kairos

// SkillsPolicy is the policy's `skills` section: limits of the skills
// Kairos builds for itself (the `skill` tool and the skill__<name> tools).
// features.self_update: false removes all of it.
type SkillsPolicy struct {
	// VersionsKept is how many versions of a skill are kept for rollback
	// (the current one included).
	VersionsKept int `yaml:"versions_kept" json:"versions_kept"`
	// MaxFailures is how many runs in a row may fail before the skill is
	// disabled and its owner told.
	MaxFailures int `yaml:"max_failures" json:"max_failures"`
	// MaxOffered is the most skill__ tools offered in one prompt; past it
	// the most relevant ones to the message are offered, and `skill`
	// list/show finds the others.
	MaxOffered int `yaml:"max_offered" json:"max_offered"`
	// MaxPerUser is the most skills one user may own.
	MaxPerUser int `yaml:"max_per_user" json:"max_per_user"`
	// MaxTests is the most tests a skill may carry.
	MaxTests int `yaml:"max_tests" json:"max_tests"`
}

// Skills defaults.
const (
	DefaultSkillVersionsKept = 5
	DefaultSkillMaxFailures  = 3
	DefaultSkillMaxOffered   = 8
	DefaultSkillMaxPerUser   = 50
	DefaultSkillMaxTests     = 20
)

// DefaultSkillsPolicy returns the built-in skills section.
func DefaultSkillsPolicy() SkillsPolicy {
	return SkillsPolicy{VersionsKept: DefaultSkillVersionsKept, MaxFailures: DefaultSkillMaxFailures,
		MaxOffered: DefaultSkillMaxOffered, MaxPerUser: DefaultSkillMaxPerUser, MaxTests: DefaultSkillMaxTests}
}
