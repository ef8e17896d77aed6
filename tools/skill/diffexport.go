package skill

import "github.com/kairos-agent/kairos"

// VersionDiff is the unified diff from version a to version b, as the
// UPDATE approval shows it (the console shows it beside each version).
func VersionDiff(a, b *kairos.SkillVersion) string { return versionDiff(a, b) }
