package cell_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kairos-agent/kairos/tools/cell"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		code string
		want cell.Usage
	}{
		{name: "nothing", code: "output([1,2,3].map(x => x * 2))", want: cell.Usage{}},
		{name: "getJSON", code: "const d = await getJSON('https://x.io/a');", want: cell.Usage{Network: true}},
		{name: "getJSON with a secret", code: "await getJSON(`https://x.io/${id}`, 'GH')",
			want: cell.Usage{Network: true, Secrets: true, SecretNames: []string{"GH"}}},
		{name: "getJSON with a nested call", code: "await getJSON(u(a, b))", want: cell.Usage{Network: true}},
		{name: "postJSON", code: "await postJSON(u, {a: [1, 2]})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "postJSON with a secret", code: "await postJSON(u, {a: 1}, \"TOKEN\")",
			want: cell.Usage{Network: true, NetworkWrite: true, Secrets: true, SecretNames: []string{"TOKEN"}}},
		{name: "fetch without a method", code: "const r = await fetch(u); output(await r.json())", want: cell.Usage{Network: true}},
		{name: "fetch with PUT", code: "await fetch(u, {method: 'PUT'})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "fetch with HEAD", code: "await fetch(u, {method: 'HEAD'})", want: cell.Usage{Network: true}},
		{name: "method assigned", code: "const o = {}; o.method = 'DELETE'; await fetchWithAuth(u, o)", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "method shorthand", code: "const method = 'GET'; await fetchWithAuth(u, {method})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "method without fetch", code: "const o = {method: 'POST'}; output(o)", want: cell.Usage{}},
		{name: "template method", code: "await fetch(u, {method: `POST`})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "getSecret", code: "const k = getSecret('KEY_A')", want: cell.Usage{Secrets: true, SecretNames: []string{"KEY_A"}}},
		{name: "authSecret key", code: "await fetchWithAuth(u, {authSecret: 'KEY_B'})",
			want: cell.Usage{Network: true, Secrets: true, SecretNames: []string{"KEY_B"}}},
		{name: "names in line comments", code: "// postJSON getSecret fetch\noutput(1)", want: cell.Usage{}},
		{name: "names in block comments", code: "/* postJSON(u, b, 'X') */ output(1)", want: cell.Usage{}},
		{name: "names in strings", code: "output('use postJSON or getJSON(u, s)')", want: cell.Usage{}},
		{name: "quoted global name", code: "await globalThis['postJSON'](u, {})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "code in a template expression", code: "output(`${await getJSON(u, 'S1')}`)",
			want: cell.Usage{Network: true, Secrets: true, SecretNames: []string{"S1"}}},
		{name: "regex with quotes", code: "const r = /['\"]/g; await postJSON(u, {})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "division is not a regex", code: "const a = b / 2; const c = d / 3; await postJSON(u, {})", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "unterminated string", code: "await postJSON(u, {}); const s = 'abc", want: cell.Usage{Network: true, NetworkWrite: true}},
		{name: "unterminated comment", code: "output(1) /* postJSON", want: cell.Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, cell.Scan(tc.code)); d != "" {
				t.Fatalf("Scan(%q) (-want +got):\n%s", tc.code, d)
			}
		})
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"await postJSON(u, {}, 'T')", "`${`${getSecret('x')}`}`", "/[/]/.test(a) / b", "fetch(u, {method: 'POST'",
		"getJSON(", "'\\", "`${", "/*", "a ? /x/ : y", "method:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		u := cell.Scan(src)
		if u.NetworkWrite && !u.Network {
			t.Fatalf("Scan(%q) = %+v: a write without network use", src, u)
		}
		for _, n := range u.SecretNames {
			if !u.Secrets || n == "" || len(n) > 64 {
				t.Fatalf("Scan(%q) = %+v: bad secret name %q", src, u, n)
			}
		}
	})
}
