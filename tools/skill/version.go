package skill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/cell"
)

// version builds and checks the version the arguments describe; on an
// update, what is not given is the current version's.
func (s *Skills) version(p *kairos.Policy, inv *kairos.ToolInvocation, a *args, cur *kairos.SkillVersion) (*kairos.SkillVersion, error) {
	v := &kairos.SkillVersion{InputSchema: json.RawMessage(`{"type":"object"}`), Tainted: inv.Tainted, CreatedBy: inv.UserKey}
	if cur != nil {
		v.Description, v.InputSchema, v.Code = cur.Description, cur.InputSchema, cur.Code
		v.Tests, v.Capabilities = slices.Clone(cur.Tests), cur.Capabilities
	}
	if a.Description != nil {
		v.Description = *a.Description
	}
	if a.Code != nil {
		v.Code = *a.Code
	}
	if len(a.InputSchema) > 0 {
		v.InputSchema = a.InputSchema
	}
	if a.Tests != nil {
		v.Tests = a.Tests
	}
	if a.Capabilities != nil {
		v.Capabilities = *a.Capabilities
	}
	if err := checkFields(v, p.Skills.MaxTests); err != nil {
		return nil, err
	}
	if err := s.checkCapabilities(p, v); err != nil {
		return nil, err
	}
	// An update that changes nothing is a new approval of the same
	// version: worth asking only when the policy now grants more (or
	// less) than the current version's approval showed.
	if cur != nil && a.Description == nil && a.Code == nil && len(a.InputSchema) == 0 && a.Tests == nil && a.Capabilities == nil &&
		sameGrant(approvalGrant(p, v), approved(p, cur)) {
		return nil, kairos.Errorf(kairos.EINVALID, "an update needs at least one of description, code, input_schema, tests, capabilities "+
			"(or a policy that grants the skill other than its approval showed)")
	}
	return v, nil
}

func checkFields(v *kairos.SkillVersion, maxTests int) error {
	v.Description = strings.TrimSpace(v.Description)
	switch {
	case v.Description == "" || strings.ContainsAny(v.Description, "\r\n") || len(v.Description) > MaxDescriptionBytes:
		return kairos.Errorf(kairos.EINVALID, "argument \"description\" must be one line of at most %d bytes", MaxDescriptionBytes)
	case strings.TrimSpace(v.Code) == "":
		return kairos.Errorf(kairos.EINVALID, "argument \"code\" is required: JavaScript defining function run(input)")
	case len(v.Code) > MaxCodeBytes:
		return kairos.Errorf(kairos.EINVALID, "argument \"code\" is longer than %d bytes", MaxCodeBytes)
	case !strings.Contains(v.Code, "run"):
		return kairos.Errorf(kairos.EINVALID, "the code must define run(input)")
	}
	var buf bytes.Buffer
	var obj map[string]any
	if len(v.InputSchema) > MaxSchemaBytes || json.Unmarshal(v.InputSchema, &obj) != nil || json.Compact(&buf, v.InputSchema) != nil {
		return kairos.Errorf(kairos.EINVALID, "argument \"input_schema\" must be a JSON Schema object of at most %d bytes", MaxSchemaBytes)
	}
	v.InputSchema = buf.Bytes()
	if len(v.Tests) == 0 || len(v.Tests) > maxTests {
		return kairos.Errorf(kairos.EINVALID, "a skill needs 1 to %d tests ({name, input, expect})", maxTests)
	}
	seen := map[string]bool{}
	for i := range v.Tests {
		t := &v.Tests[i]
		t.Name = strings.TrimSpace(t.Name)
		if t.Name == "" {
			t.Name = fmt.Sprintf("test %d", i+1)
		}
		if seen[t.Name] {
			return kairos.Errorf(kairos.EINVALID, "two tests are named %q", t.Name)
		}
		seen[t.Name] = true
		if len(t.Input) == 0 || !json.Valid(t.Input) || len(t.Input) > MaxInputBytes {
			return kairos.Errorf(kairos.EINVALID, "test %q: input must be JSON of at most %d bytes", t.Name, MaxInputBytes)
		}
		if len(t.Expect) == 0 || !json.Valid(t.Expect) {
			return kairos.Errorf(kairos.EINVALID, "test %q: expect must be the expected result or {\"$predicate\": \"…\"}", t.Name)
		}
	}
	return nil
}

// checkCapabilities refuses what the policy does not grant, code that
// uses the network or secrets without declaring them, and secrets without
// a host (a cell gets secrets only with a host to send them to, so the
// approval would name a risk the skill cannot take).
func (s *Skills) checkCapabilities(p *kairos.Policy, v *kairos.SkillVersion) error {
	c := &v.Capabilities
	c.Hosts, c.Secrets = dedupe(c.Hosts), dedupe(c.Secrets)
	g := cell.GrantFor(p)
	for _, h := range c.Hosts {
		if !g.Enabled {
			return kairos.Errorf(kairos.EFORBIDDEN, "the network is switched off (features.network); a skill cannot use %s", h)
		}
		if !kairos.HostAllowed(h, g.AllowHosts) {
			return kairos.Errorf(kairos.EFORBIDDEN, "%s is not in the policy's network.allow_list (%s)", h, strings.Join(g.AllowHosts, ", "))
		}
	}
	for _, n := range c.Secrets {
		if !p.Features.CredentialsAccess {
			return kairos.Errorf(kairos.EFORBIDDEN, "secrets are switched off (features.credentials_access); a skill cannot use %s", n)
		}
		if !slices.Contains(s.names, n) {
			return kairos.Errorf(kairos.EFORBIDDEN, "%q is not a configured secret (%s)", n, strings.Join(s.names, ", "))
		}
	}
	if len(c.Secrets) > 0 && len(c.Hosts) == 0 {
		return kairos.Errorf(kairos.EINVALID, "a secret only goes to the skill's declared hosts and it declares none: add capabilities.hosts or drop capabilities.secrets")
	}
	u := cell.Scan(v.Code)
	if u.Network && len(c.Hosts) == 0 {
		return kairos.Errorf(kairos.EINVALID, "the code uses the network: declare capabilities.hosts")
	}
	if u.Secrets && len(c.Secrets) == 0 {
		return kairos.Errorf(kairos.EINVALID, "the code uses secrets: declare capabilities.secrets")
	}
	return nil
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		x = strings.TrimSpace(x)
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
