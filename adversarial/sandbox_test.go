package adversarial

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// sandboxCase is a cell that attacks its sandbox; want is the error
// category it must end with, or several separated by "|" ("" = it may
// succeed, but must not leak).
type sandboxCase struct {
	name, code, want string
}

var sandboxCases = []sandboxCase{
	// Runaway work.
	{"microtask loop", `const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});`, "timeout|memory"},
	{"host call loop", `for (;;) listSecrets();`, "budget"},
	{"sleep past the deadline", `await sleep(3600000);`, "timeout"},
	// Awaits that never settle: the job loop idles in C, where no bytecode
	// runs (the interrupt poll is silent); the cell must still end.
	{"await a promise that never settles", `await new Promise(() => {});`, "timeout"},
	{"await it inside an async function", `const f = async () => { await new Promise(() => {}); return 1; }; output(await f());`, "timeout"},
	{"await a timer a billion ms away", `await new Promise((r) => setTimeout(r, 1e9));`, "timeout"},
	{"catastrophic regex", `/^(a+)+$/.test("a".repeat(40) + "b");`, "timeout"},
	{"memory bomb", `const a = []; for (;;) a.push("x".repeat(1 << 20));`, "memory"},
	{"output flood", `for (;;) console.log("y".repeat(10000));`, "budget"},
	{"deep recursion", `const f = n => f(n + 1) + 1; f(0);`, "memory"},
	// Tampering with the prelude.
	{"prototype pollution of output", `Object.prototype.toJSON = function () { return String(getSecret("API_KEY")) }; output({a: 1});`, ""},
	{"redefine JSON.stringify", `JSON.stringify = () => String(getSecret("API_KEY")); output({a: 1}); console.log({b: 2});`, ""},
	{"replace TaintedString", `try { TaintedString.prototype.toJSON = function () { return String(this) } } catch (e) {} output({k: getSecret("API_KEY")});`, ""},
	// Hostile host-call arguments.
	{"huge host argument", `try { readAttachment("x".repeat(8 << 20)) } catch (e) { output(e.name) }`, ""},
	{"odd host arguments", `for (const v of [null, undefined, 1e308, {}, [], () => 1, Symbol.iterator]) { try { getSecret(v) } catch (e) {} } output("ok")`, ""},
	// Smuggling the secret out.
	{"reversed", `output(String(getSecret("API_KEY")).split("").reverse().join(""))`, ""},
	{"character codes", `output([...String(getSecret("API_KEY"))].map(c => c.charCodeAt(0)))`, ""},
	{"xor", `output([...String(getSecret("API_KEY"))].map(c => c.charCodeAt(0) ^ 23))`, ""},
	{"base32", `const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"; let b = "", o = ""; for (const c of String(getSecret("API_KEY"))) b += c.charCodeAt(0).toString(2).padStart(8, "0"); for (let i = 0; i < b.length; i += 5) o += A[parseInt(b.slice(i, i + 5).padEnd(5, "0"), 2)]; output(o)`, ""},
	{"rot13", `output(String(getSecret("API_KEY")).replace(/[a-z]/gi, c => String.fromCharCode((c <= "Z" ? 90 : 122) >= (c = c.charCodeAt(0) + 13) ? c : c - 26)))`, ""},
	{"one character per output", `for (const c of String(getSecret("API_KEY"))) console.log(c)`, ""},
	{"split across cells (first half)", `output(String(getSecret("API_KEY")).slice(0, 13))`, ""},
	{"split across cells (second half)", `output(String(getSecret("API_KEY")).slice(13))`, ""},
	{"base64 via btoa-like", `let s = String(getSecret("API_KEY")), o = ""; const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; for (let i = 0; i < s.length; i += 3) { const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0); o += A[n >> 18 & 63] + A[n >> 12 & 63] + A[n >> 6 & 63] + A[n & 63]; } output(o)`, ""},
	{"compare guesses", `const k = String(getSecret("API_KEY")); output({starts: k.startsWith("sk-adv"), len: k.length})`, ""},
}

// TestSandbox runs each hostile cell with `kairos cell run` (the secret in
// the environment, default budgets but a 3 s time budget, 20 s for the
// cells that must end on their memory or output budget). What must hold:
// the process ends, the cell ends with the expected category, and no
// decoding of anything it printed gives the secret (the halves of the
// split case are joined and checked too).
func TestSandbox(t *testing.T) {
	t.Parallel()
	bin := kairosBinary(t)
	dir := t.TempDir()
	// Cells that must end on a limit other than time get a long time
	// budget, so that a loaded machine cannot reach the deadline first.
	policy := func(ms int) string {
		pol := filepath.Join(dir, fmt.Sprintf("policy-%d.yaml", ms))
		os.WriteFile(pol, []byte(fmt.Sprintf("features:\n  credentials_access: true\nbudgets:\n  defaults:\n    time_budget_ms: %d\n    max_output_bytes: 65536\n"+
			"    memory_limit_mb: 64\n    max_tool_calls: 200\n    risk_tier: low\n", ms)), 0o600)
		return pol
	}
	short, long := policy(3000), policy(20000)
	// With a data folder, `kairos cell run` keeps its compilation cache
	// there: the engine is compiled by the first case, not by every one.
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	var section tally
	var outputs []string
	for _, c := range sandboxCases {
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".js")
		os.WriteFile(f, []byte(c.code), 0o600)
		cmd := exec.Command(bin, "cell", "run", f)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "KAIROS_DATA_DIR=" + filepath.Join(dir, "data"),
			"KAIROS_POLICY=" + short, "KAIROS_SECRET_API_KEY=" + secret}
		if c.want == "memory" || c.want == "budget" {
			cmd.Env[len(cmd.Env)-2] = "KAIROS_POLICY=" + long
		}
		start := time.Now()
		out, _ := runCmd(t, cmd)
		var res struct {
			Success       bool            `json:"success"`
			ErrorCategory string          `json:"error_category"`
			Output        json.RawMessage `json:"output"`
			Stdout        string          `json:"stdout"`
		}
		jsonStart := strings.Index(out, "{\n")
		if jsonStart < 0 || json.Unmarshal([]byte(out[jsonStart:]), &res) != nil {
			section.add(c.name, false, "no result: "+tail(out, 300))
			continue
		}
		outputs = append(outputs, string(res.Output)+res.Stdout)
		switch {
		case c.want != "" && (res.ErrorCategory == "" || !strings.Contains("|"+c.want+"|", "|"+res.ErrorCategory+"|")):
			section.add(c.name, false, "ended with "+strconv.Quote(res.ErrorCategory)+", want "+c.want+" after "+time.Since(start).String())
		case leaks(out):
			section.add(c.name, false, "the secret comes out of "+tail(out, 300))
		default:
			section.add(c.name, true, "")
		}
	}
	if leaks(strings.Join(outputs, "")) {
		t.Errorf("the secret comes out of the cells' outputs put together")
	}
	section.report(t, "sandbox")
}

// runCmd runs cmd and kills it if it still runs at the test's deadline.
func runCmd(t *testing.T, cmd *exec.Cmd) (string, error) {
	var b testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return b.String(), err
	case <-testkit.Deadline(t).Done():
		cmd.Process.Kill()
		<-done
		return b.String() + "\n(killed at the test's deadline)", nil
	}
}

// leaks reports whether s, or a usual decoding of it, holds a third of the
// secret or more.
func leaks(s string) bool {
	probe := secret[7:17]
	forms := testkit.Decodings(s, 23)
	for _, f := range forms {
		if strings.Contains(f, probe) {
			return true
		}
	}
	for _, enc := range []string{base32.StdEncoding.EncodeToString([]byte(secret)), base64.StdEncoding.EncodeToString([]byte(secret)),
		hex.EncodeToString([]byte(secret))} {
		if strings.Contains(s, enc[8:20]) {
			return true
		}
	}
	return false
}
