package cell

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// TestNetworkTargetsNamesOnlyWhatTheTextShows: code whose every network
// call names its URL and method literally has targets; any call the text
// cannot name (computed, aliased, a string name, a template, a property
// access, a method from elsewhere) leaves the code without targets, in
// every position among nameable calls.
func TestNetworkTargetsNamesOnlyWhatTheTextShows(t *testing.T) {
	nameable := []struct {
		code         string
		host, method string
	}{
		{`await postJSON("https://ha.local/api/services/light/turn_off", {entity_id: "light.kitchen"})`, "ha.local", "POST"},
		{`const r = await getJSON("https://API.example.org/weather?q=x")`, "api.example.org", "GET"},
		{`await fetch("http://ha.local:8123/api", {method: "PUT", body: "{}"})`, "ha.local", "PUT"},
		{`await fetch('https://notes.example/x', {"method": "DELETE"})`, "notes.example", "DELETE"},
		{`await fetch("https://a.example/")`, "a.example", "GET"},
		{`await fetchWithAuth("https://b.example/", {method: "PATCH", headers: {}})`, "b.example", "PATCH"},
		{`await fetch("https://c.example/", {method: "POST", body: JSON.stringify({a: 1})})`, "c.example", "POST"},
	}
	hostile := []string{
		"await postJSON(base + \"/x\", {})",
		"await postJSON(`https://${host}/x`, {})",
		"const p = postJSON; await p(\"https://evil.example/\", {})",
		"await globalThis[\"postJSON\"](\"https://evil.example/\", {})",
		"await globalThis.fetch(\"https://evil.example/\", {method: \"POST\"})",
		"await fetch(\"https://evil.example/\", {method: m})",
		"await fetch(\"https://evil.example/\", opts)",
		"await fetch(\"https://evil.example/\", {...o}); const o = {method: \"POST\"}",
		"await fetch(\"https://evil.example/\", {...o})",
		"await fetch(\"https://evil.example/\", {method: \"GET\", method: \"POST\"})",
		"const o = {method: \"DELETE\"}",
		"await fetch(\"ftp://evil.example/\")",
		"await fetch(\"https://evil.example/\", {method: \"BREW\"})",
		"[1].map(postJSON)",
	}
	r := rand.New(rand.NewPCG(33, 33))
	for i := 0; i < 300; i++ {
		// A few nameable calls in random order...
		var parts []string
		hosts, methods := map[string]bool{}, map[string]bool{}
		for _, j := range r.Perm(len(nameable))[:1+r.IntN(3)] {
			parts = append(parts, nameable[j].code)
			hosts[nameable[j].host], methods[nameable[j].method] = true, true
		}
		code := strings.Join(parts, ";\n// a comment naming postJSON(evil) is not code\n")
		tg, ok := NetworkTargets(code)
		if !ok || !slices.Equal(tg.Hosts, sortedKeys(hosts)) || !slices.Equal(tg.Methods, sortedKeys(methods)) {
			t.Fatalf("nameable code %q: %+v, %v; want hosts %v methods %v", code, tg, ok, sortedKeys(hosts), sortedKeys(methods))
		}
		// ...and one that is not, anywhere among them, spoils the whole.
		at := r.IntN(len(parts) + 1)
		bad := slices.Insert(slices.Clone(parts), at, hostile[r.IntN(len(hostile))])
		code = strings.Join(bad, ";\n")
		if tg, ok := NetworkTargets(code); ok {
			t.Fatalf("code with an unnameable call got targets %+v:\n%s", tg, code)
		}
	}
	if _, ok := NetworkTargets(`output(1 + 1)`); ok {
		t.Error("code without network calls has targets")
	}
}

// TestRestrictKeepsTheGrantWithinPolicyAndTargets: a cell run under a
// standing grant reaches only the targets' hosts and methods the policy
// still allows.
func TestRestrictKeepsTheGrantWithinPolicyAndTargets(t *testing.T) {
	g := kairos.NetworkGrant{Enabled: true, AllowHosts: []string{"ha.local", "*.example.org"}, Methods: []string{"GET", "POST", "DELETE"}}
	for _, tc := range []struct {
		tg    Targets
		hosts []string
		ms    []string
	}{
		{Targets{Hosts: []string{"ha.local"}, Methods: []string{"POST"}}, []string{"ha.local"}, []string{"POST"}},
		{Targets{Hosts: []string{"a.example.org", "gone.net"}, Methods: []string{"GET", "PUT"}}, []string{"a.example.org"}, []string{"GET"}},
		{Targets{Hosts: []string{"gone.net"}, Methods: []string{"POST"}}, nil, nil},
		{Targets{}, nil, nil},
	} {
		got := Restrict(g, tc.tg)
		if !slices.Equal(got.AllowHosts, tc.hosts) || !slices.Equal(got.Methods, tc.ms) || got.Enabled != (tc.hosts != nil) {
			t.Errorf("Restrict(%v) = %+v; want hosts %v methods %v", tc.tg, got, tc.hosts, tc.ms)
		}
	}
	if got := Restrict(kairos.NetworkGrant{}, Targets{Hosts: []string{"ha.local"}, Methods: []string{"POST"}}); got.Enabled {
		t.Error("Restrict enabled a disabled grant")
	}
}
