package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/kairos-agent/kairos"
)

// What an approval of an MCP tool shows, and what a standing grant for
// it covers. The target is the tool and the arguments that matter, as a
// pattern: an argument that names something (an id, a number, a flag, a
// short word without spaces: "light.kitchen", 3, true) must be the same
// for the grant to cover the call; free text (anything with a space, or
// long) matches any value and shows as "any text". The approval shows the
// pattern, so the person pressing "Always here" sees what it covers.

// maxNameLen is the longest argument value taken for a name.
const maxNameLen = 64

// argPattern is one argument of a grant's pattern: its value, or "*".
func argPattern(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" || len(x) > maxNameLen || strings.IndexFunc(x, unicode.IsSpace) >= 0 {
			return "*"
		}
		b, _ := json.Marshal(x)
		return string(b)
	case nil, bool, float64, json.Number:
		b, _ := json.Marshal(x)
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > maxNameLen || strings.IndexFunc(string(b), unicode.IsSpace) >= 0 {
		return "*"
	}
	return string(b)
}

// grantTarget is the pattern of a call: name(key=value,…), keys sorted.
func grantTarget(name string, args map[string]any) (target, label string) {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var pat, words []string
	for _, k := range keys {
		p := argPattern(args[k])
		pat = append(pat, k+"="+p)
		if p == "*" {
			p = "any text"
		}
		words = append(words, k+" "+p)
	}
	target = name + "(" + strings.Join(pat, ",") + ")"
	label = name
	if len(words) > 0 {
		label += " with " + strings.Join(words, ", ")
	}
	return target, label
}

// sentence is the approval's question for a call: the server, the tool,
// its description (the server's words, quoted) and the arguments.
func sentence(server, remote, description string, args map[string]any) string {
	desc := strings.TrimSpace(strings.Join(strings.Fields(description), " "))
	if desc != "" {
		desc = " (“" + kairos.Clip(strings.TrimSuffix(desc, "."), 160) + "”)"
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var with []string
	for _, k := range keys {
		b, _ := json.Marshal(args[k])
		with = append(with, fmt.Sprintf("%s %s", k, kairos.Clip(string(b), 80)))
	}
	s := fmt.Sprintf("Use %s on the %s server%s", remote, server, desc)
	if len(with) > 0 {
		s += " with " + strings.Join(with, ", ")
	}
	return s + "?"
}
