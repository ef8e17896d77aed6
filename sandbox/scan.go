package sandbox

import (
	"regexp"
	"strings"

	"github.com/kairos-agent/kairos"
)

var (
	reSecretsEnv  = regexp.MustCompile(`process\.env\.__SECRETS__|__SECRETS__`)
	reLogToString = regexp.MustCompile(`(console\.(log|error|warn|info|debug)|\bprint)\(.*\.toString\(\)`)
	// reStaticImport finds import statements, a syntax error in a cell
	// (a global script) that is reported as category import.
	reStaticImport = regexp.MustCompile(`(?m)^\s*import\s+(\S.*\sfrom\s|['"])`)
	reLogGetSecret = regexp.MustCompile(`(console\.(log|error|warn|info|debug)|\bprint)\(.*getSecret\(\s*['"\x60]([^'"\x60]*)['"\x60]\s*\)`)
)

// ScanForLeaks is seed 003's pre-execution scan. It returns why code is
// refused, or "" to let it run. The rules, each on a single line of code:
//
//   - any mention of __SECRETS__ (the seed's secret environment variable);
//   - console.log/error/warn/info/debug or print called with
//     getSecret('NAME') of a secret the task carries;
//   - console.* or print called with a .toString() result, when the code
//     calls getSecret at all (the seed applies it to every cell, which
//     refuses innocent code such as console.log(n.toString())).
//
// The scan catches careless code; the output scrubber is what keeps
// secrets in, whatever the code does.
func ScanForLeaks(code string, secrets map[string]string) string {
	if reSecretsEnv.MatchString(code) {
		return "direct access to __SECRETS__"
	}
	for _, m := range reLogGetSecret.FindAllStringSubmatch(code, -1) {
		if _, ok := secrets[m[3]]; ok || len(secrets) == 0 {
			return "attempting to log secret " + kairos.Clip(m[3], 64)
		}
	}
	if strings.Contains(code, "getSecret") && reLogToString.MatchString(code) {
		return "possible secret leak via toString()"
	}
	return ""
}

// Categorize maps a JavaScript error text ("TypeError: …" and its stack)
// to a kairos error category.
func Categorize(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	name, _, _ := strings.Cut(first, ":")
	name = strings.TrimSpace(name)
	lower := strings.ToLower(first)
	switch {
	case strings.Contains(lower, "could not load module") || strings.Contains(lower, "cannot find module") ||
		strings.Contains(lower, "module not found") ||
		(name == "SyntaxError" && strings.Contains(lower, "import")):
		return kairos.CatImport
	case name == "NetworkError":
		return kairos.CatNetwork
	case strings.Contains(lower, "out of memory"):
		return kairos.CatMemory
	case strings.Contains(lower, "stack overflow") || strings.Contains(lower, "maximum call stack"):
		return kairos.CatMemory
	case name == "InternalError" && strings.Contains(lower, "interrupted"):
		return kairos.CatTimeout
	case name == "SyntaxError":
		return kairos.CatSyntax
	case name == "TypeError":
		return kairos.CatType
	case name == "ReferenceError":
		return kairos.CatReference
	}
	return kairos.CatRuntime
}
