package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestSealedSecretsStayOutOfRefusals: a token put where a refusal names
// it (the URL's host or scheme, a redirect) must not come back to the cell
// as the value in the error's message, in any letter case, caught (and
// reversed) or uncaught. Found by the adversarial suite: the host and
// scheme refusals quoted the unsealed URL.
func TestSealedSecretsStayOutOfRefusals(t *testing.T) {
	const secret = "Tok-Refusal-5566778899"
	tests := []struct{ name, url string }{
		{"host", `"http://" + k + "/x"`},
		{"host with an allowed suffix", `"http://" + k + ".127.0.0.1/x"`},
		{"scheme", `k + "://x/"`},
		{"unreachable allowed host", `"http://127.0.0.1:1/" + k`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, caught := range []bool{true, false} {
				code := `const k = getSecret("TOKEN"); const u = ` + tc.url + `;`
				if caught {
					code += `try { await getJSON(u); output("fetched") } catch (e) { output({m: e.message, rev: String(e.message).split("").reverse().join("")}) }`
				} else {
					code += `await getJSON(u);`
				}
				tk := task(code)
				tk.Secrets = map[string]string{"TOKEN": secret}
				tk.Network = kairos.NetworkGrant{Enabled: true, AllowHosts: []string{"127.0.0.1"}, Methods: []string{"GET"}}
				tk.Budget.TimeBudget = 5 * time.Second
				res := run(t, tk)
				all := strings.ToLower(string(res.Output) + res.Stdout + res.Stderr + res.Error)
				for _, d := range testkit.Decodings(all, 42) {
					if strings.Contains(d, strings.ToLower(secret[4:16])) {
						t.Fatalf("caught=%v: the secret came back in a refusal: %+v", caught, res)
					}
				}
				if out := string(res.Output); caught && !strings.Contains(out, "not ") && !strings.Contains(out, "failed") {
					t.Errorf("the refusal no longer says what was refused: %s", out)
				}
			}
		})
	}
}
