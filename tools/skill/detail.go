package skill

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kairos-agent/kairos"
)

// detail is what the approver reads: the whole code (or the diff), the
// tests and their results, the capabilities and the risk.
func detail(pr *prepared, inv *kairos.ToolInvocation) string {
	var b strings.Builder
	v := pr.next
	switch pr.kind {
	case ActCreate:
		fmt.Fprintf(&b, "New skill, version 1 (offered as %s)\n", "skill__"+nameOf(inv))
	case ActUpdate:
		fmt.Fprintf(&b, "Update of %s: version %d → a new version\n", pr.cur.Name, pr.cur.Version)
	default:
		fmt.Fprintf(&b, "Rollback of %s: version %d → version %d\n", pr.cur.Name, pr.cur.Version, v.Version)
	}
	fmt.Fprintf(&b, "Description: %s\n", v.Description)
	fmt.Fprintf(&b, "Risk: %s\n", orDefault(strings.Join(v.Risk, ", "), "none (computes only)"))
	if v.Grant != nil {
		b.WriteString(describeGrant(v.Grant))
	} else { // a rollback to a version approved before grants were kept
		fmt.Fprintf(&b, "Network hosts: %s\nSecrets: %s\n", orDefault(strings.Join(v.Capabilities.Hosts, ", "), "none"),
			orDefault(strings.Join(v.Capabilities.Secrets, ", "), "none"))
	}
	if inv.Tainted {
		fmt.Fprintf(&b, "Made while untrusted content (%s) was in the conversation: the skill stays marked and its results are untrusted.\n",
			orDefault(inv.TaintSource, "untrusted content"))
	}
	if pr.tr != nil {
		writeTests(&b, v.Tests, pr.tr.results)
	}
	if len(pr.dropped) > 0 {
		fmt.Fprintf(&b, "Dropped tests (no longer checked): %s\n", strings.Join(pr.dropped, ", "))
	}
	if pr.kind == ActCreate {
		fmt.Fprintf(&b, "Input schema: %s\nCode:\n%s\n", v.InputSchema, strings.TrimRight(v.Code, "\n"))
	} else {
		fmt.Fprintf(&b, "Diff:\n%s", orDefault(pr.diff, "(no change)\n"))
	}
	return b.String()
}

func nameOf(inv *kairos.ToolInvocation) string {
	var a struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(inv.Arguments, &a)
	return strings.TrimPrefix(strings.TrimSpace(a.Name), kairos.SkillToolPrefix)
}

func writeTests(b *strings.Builder, tests []kairos.SkillTest, res []kairos.SkillTestResult) {
	passed := 0
	for _, r := range res {
		if r.Passed {
			passed++
		}
	}
	fmt.Fprintf(b, "Tests (%d of %d passed in the sandbox):\n", passed, len(res))
	for i, r := range res {
		mark := "PASS"
		if !r.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(b, "  %s %s: input %s, expect %s", mark, r.Name, kairos.Clip(string(tests[i].Input), 200), kairos.Clip(string(tests[i].Expect), 200))
		if r.Error != "" {
			fmt.Fprintf(b, ", error: %s", r.Error)
		} else if !r.Passed {
			fmt.Fprintf(b, ", got %s", kairos.Clip(string(r.Got), 200))
		}
		b.WriteString("\n")
	}
}

// versionDiff is a unified diff of two versions: the fields as a header,
// the tests as JSON lines, then the code.
func versionDiff(a, b *kairos.SkillVersion) string {
	return unifiedDiff("a/"+label(a), "b/"+label(b), render(a), render(b))
}

func label(v *kairos.SkillVersion) string {
	if v.Version == 0 {
		return "new"
	}
	return fmt.Sprintf("v%d", v.Version)
}

// render is a version as diffable lines.
func render(v *kairos.SkillVersion) []string {
	caps, _ := json.Marshal(v.Capabilities)
	lines := []string{"description: " + v.Description, "input_schema: " + string(v.InputSchema), "capabilities: " + string(caps)}
	if v.Grant != nil {
		g, _ := json.Marshal(v.Grant)
		lines = append(lines, "grant: "+string(g))
	}
	for _, t := range v.Tests {
		tl, _ := json.Marshal(t)
		lines = append(lines, "test: "+string(tl))
	}
	lines = append(lines, "code:")
	return append(lines, strings.Split(strings.TrimRight(v.Code, "\n"), "\n")...)
}
