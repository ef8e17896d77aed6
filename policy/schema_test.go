package policy_test

import (
	"encoding"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

const (
	schemaPath  = "../doc/policy.schema.json"
	examplePath = "../deploy/policy.example.yaml"
)

// yamlPaths lists every key path of t by reflection on yaml tags, with
// "[]" for list items and "{}" for map values: "clock.checkins.rules[].id".
// Types that decode from their own text (kairos.Duration) are leaves.
func yamlPaths(t reflect.Type, prefix string, out *[]string) {
	if reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		yamlPaths(t.Elem(), prefix, out)
	case reflect.Slice:
		yamlPaths(t.Elem(), prefix+"[]", out)
	case reflect.Map:
		yamlPaths(t.Elem(), prefix+"{}", out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if f.Anonymous && opts == "inline" {
				yamlPaths(f.Type, prefix, out)
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			*out = append(*out, p)
			yamlPaths(f.Type, p, out)
		}
	}
}

type schemaNode map[string]any

func loadSchema(t *testing.T) schemaNode {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s schemaNode
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	return s
}

// deref follows a local $ref ("#/$defs/x").
func deref(root, n schemaNode) schemaNode {
	for {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n
		}
		name := strings.TrimPrefix(ref, "#/$defs/")
		n = schemaNode(root["$defs"].(map[string]any)[name].(map[string]any))
	}
}

// schemaPaths lists the key paths the schema describes, in the notation
// of yamlPaths, and checks that every object forbids unknown keys.
func schemaPaths(t *testing.T, root, n schemaNode, prefix string, out *[]string) {
	n = deref(root, n)
	if items, ok := n["items"].(map[string]any); ok {
		schemaPaths(t, root, items, prefix+"[]", out)
		return
	}
	if props, ok := n["properties"].(map[string]any); ok {
		if n["additionalProperties"] != false {
			t.Errorf("schema object %q does not set additionalProperties: false", prefix)
		}
		for name, sub := range props {
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			*out = append(*out, p)
			schemaPaths(t, root, sub.(map[string]any), p, out)
		}
		return
	}
	if ap, ok := n["additionalProperties"].(map[string]any); ok {
		if _, ok := n["propertyNames"]; !ok {
			t.Errorf("schema map %q does not restrict its keys (propertyNames)", prefix)
		}
		schemaPaths(t, root, ap, prefix+"{}", out)
	}
}

func TestSchemaCoversEveryKey(t *testing.T) {
	root := loadSchema(t)
	if root["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", root["$schema"])
	}
	var want, got []string
	yamlPaths(reflect.TypeOf(kairos.Policy{}), "", &want)
	schemaPaths(t, root, root, "", &got)
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema keys differ from kairos.Policy's yaml keys (-go +schema):\n%s", diff)
	}
}

// TestSchemaEnums checks the schema's enums against the Go validation's.
func TestSchemaEnums(t *testing.T) {
	root := loadSchema(t)
	at := func(path ...string) schemaNode {
		n := root
		for _, p := range path {
			n = deref(root, n)
			switch p {
			case "[]":
				n = schemaNode(n["items"].(map[string]any))
			case "{}":
				n = schemaNode(n["propertyNames"].(map[string]any))
			default:
				n = schemaNode(n["properties"].(map[string]any)[p].(map[string]any))
			}
		}
		return deref(root, n)
	}
	enum := func(n schemaNode) []string {
		var out []string
		for _, v := range n["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	tests := []struct {
		name   string
		node   schemaNode
		values []string
	}{
		{"clock.mode", at("clock", "mode"), policy.ClockModes},
		{"thread_kind", at("clock", "checkins", "rules", "[]", "when", "thread_kind"), policy.ThreadKinds},
		{"group_replies", at("access", "group_replies"), policy.GroupReplyModes},
		{"auto_divide", at("sessions", "auto_divide"), policy.AutoDivideModes},
		{"risk_tier", at("budgets", "defaults", "risk_tier"), policy.RiskTiers},
		{"per_risk_tier keys", at("budgets", "per_risk_tier", "{}"), policy.RiskTiers},
		{"per_verb keys", at("budgets", "per_verb", "{}"), kairos.Verbs},
		{"methods", at("network", "methods", "[]"), policy.HTTPMethods},
		{"approvals", at("approvals", "required", "[]"), policy.KnownActions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.values, enum(tc.node)); diff != "" {
				t.Errorf("enum (-go +schema):\n%s", diff)
			}
		})
	}
	// The schema's patterns agree with the Go checks.
	hhmm := regexp.MustCompile(at("sessions", "auto_divide_time")["pattern"].(string))
	for _, tc := range []struct {
		s  string
		ok bool
	}{{"00:00", true}, {"23:59", true}, {"09:30", true}, {"24:00", false}, {"9:30", false}, {"12:60", false}} {
		if hhmm.MatchString(tc.s) != tc.ok {
			t.Errorf("auto_divide_time pattern on %q = %v, want %v", tc.s, !tc.ok, tc.ok)
		}
	}
	dur := regexp.MustCompile(deref(root, schemaNode{"$ref": "#/$defs/duration"})["pattern"].(string))
	for _, s := range []string{"P1D", "PT2H", "PT30M", "P1W", "P1DT2H", "PT0.5S", "P1Y2M3W4DT5H6M7.5S", "P2M", "PT2M",
		"", "P", "PT", "P1DT", "P1H", "30m", "1D", "p1d", "P1.D", "PT1D", "P1S", "P1D2Y"} {
		_, err := kairos.ParseDuration(s)
		if dur.MatchString(s) != (err == nil) {
			t.Errorf("duration %q: schema pattern says %v, kairos.ParseDuration says %v", s, dur.MatchString(s), err)
		}
	}
}

func TestExampleFile(t *testing.T) {
	res, err := policy.LoadFile(examplePath)
	if err != nil {
		t.Fatalf("example does not load:\n%v", err)
	}
	if res.Defaults {
		t.Fatal("example file not found")
	}
	// The example documents the defaults: loading it changes nothing.
	if diff := cmp.Diff(kairos.DefaultPolicy(), res.Policy, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("example differs from kairos.DefaultPolicy() (-default +example):\n%s", diff)
	}
	if err := policy.Validate(res.Policy); err != nil {
		t.Errorf("Validate(example): %v", err)
	}

	// Every key is documented (as a key or in a comment).
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	yamlPaths(reflect.TypeOf(kairos.Policy{}), "", &paths)
	seen := map[string]bool{}
	for _, p := range paths {
		key := p[strings.LastIndex(p, ".")+1:]
		key = strings.TrimRight(key, "[]{}")
		if seen[key] {
			continue
		}
		seen[key] = true
		re := regexp.MustCompile(`(?m)^[ \t]*(#[ \t]*)?(- )?` + regexp.QuoteMeta(key) + `:`)
		if !re.Match(data) {
			t.Errorf("example does not document %q (%s)", key, p)
		}
	}
	// Every verb and risk tier is named in the budgets comments.
	for _, v := range slices.Concat(kairos.Verbs, policy.RiskTiers, policy.KnownActions) {
		if !strings.Contains(string(data), v) {
			t.Errorf("example does not mention %q", v)
		}
	}
}

// TestExampleStrictGoccy decodes the example with goccy/go-yaml's own
// strict Unmarshal into an empty policy: the example is complete, so the
// result must be the defaults too (a cross-check of our decoder).
func TestExampleStrictGoccy(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	var p kairos.Policy
	if err := yaml.UnmarshalWithOptions(data, &p, yaml.Strict()); err != nil {
		t.Fatalf("goccy strict: %v", err)
	}
	if diff := cmp.Diff(kairos.DefaultPolicy(), &p, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("goccy's decoding of the example differs from the defaults (-default +goccy):\n%s", diff)
	}
}
