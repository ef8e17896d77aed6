package code

import (
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// TestGrantTargetOfNetworkWrites: a network write's action names its
// hosts and methods as the grant target; a host outside the allow list,
// or one that cannot be named, marks the write as an unlisted-host write;
// code that also uses secrets has no target.
func TestGrantTargetOfNetworkWrites(t *testing.T) {
	pol := kairos.DefaultPolicy()
	pol.Features.Network = true
	pol.Network.AllowList = []string{"ha.local", "*.example.org"}
	pol.Network.Methods = []string{"GET", "POST"}
	tool := New(Config{Policy: func() *kairos.Policy { return pol }})
	for _, tc := range []struct {
		code     string
		target   string
		unlisted bool
	}{
		{`await postJSON("https://ha.local/api", {a: 1})`, "network POST ha.local", false},
		{`await getJSON("https://w.example.org/x"); await postJSON("https://ha.local/api", {})`, "network GET,POST ha.local,w.example.org", false},
		{`await postJSON("https://elsewhere.net/api", {})`, "network POST elsewhere.net", true},
		{`await postJSON(url, {})`, "", true},
	} {
		act := describeRun(tool.classify(pol, tc.code).action, tc.code)
		if act.Name != NameNetworkWrite || act.Target != tc.target || act.UnlistedHost != tc.unlisted {
			t.Errorf("%s: action %s target %q unlisted %v; want %q, %v", tc.code, act.Name, act.Target, act.UnlistedHost, tc.target, tc.unlisted)
		}
		if !strings.HasSuffix(act.Summary, "?") || !strings.Contains(act.Detail, tc.code) {
			t.Errorf("%s: summary %q detail %q", tc.code, act.Summary, act.Detail)
		}
		if why := kairos.GrantFloor(pol, "code", act); (why == "") != (tc.target != "" && !tc.unlisted) {
			t.Errorf("%s: floor %q", tc.code, why)
		}
	}
}
