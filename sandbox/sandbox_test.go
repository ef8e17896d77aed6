package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/tetratelabs/wazero"
)

// shared is one Runner for the package's tests.
var shared *Runner

// engineCache is the compilation cache every Runner of the package's
// tests uses: the shared one compiles the engine into it once, and a test
// that needs a Runner of its own loads it from there (compiling took
// 15-20 s under -race on a busy 2-core machine, six times per run).
// Config's in-memory default is what the agent and tools/skill tests use.
var engineCache string

func TestMain(m *testing.M) {
	ctx := context.Background()
	var err error
	if engineCache, err = os.MkdirTemp("", "kairos-sandbox-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared, err = New(ctx, Config{PoolSize: 2, CacheDir: engineCache})
	if err == nil {
		err = shared.Warm(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(engineCache)
		os.Exit(1)
	}
	code := m.Run()
	_ = shared.Close(ctx)
	os.RemoveAll(engineCache)
	os.Exit(code)
}

var epoch = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func task(code string) *kairos.CellTask {
	return &kairos.CellTask{Code: code, Verb: kairos.VerbResearch, Now: epoch, Credentials: true,
		Budget: kairos.Budget{TimeBudget: 5 * time.Second}}
}

func run(t *testing.T, tk *kairos.CellTask) *kairos.CellResult {
	t.Helper()
	res, err := shared.Run(context.Background(), tk)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestRunBasics(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		success  bool
		category string
		stdout   string
		output   string
		errHas   string
	}{
		{name: "print", code: `console.log("hi", 1, {a: [1, 2]}, null, undefined)`, success: true, stdout: "hi 1 {\"a\":[1,2]} null undefined\n"},
		{name: "output", code: `output({n: 42, s: "x"})`, success: true, output: `{"n":42,"s":"x"}`},
		{name: "output last wins", code: `output(1); output([2])`, success: true, output: `[2]`},
		{name: "top-level await", code: `const v = await Promise.resolve(7); output(v)`, success: true, output: `7`},
		{name: "stderr", code: `console.error("bad"); console.warn("w")`, success: true},
		{name: "date is task now", code: `output(new Date().toISOString().slice(0, 16))`, success: true, output: `"2025-03-04T05:06"`},
		{name: "syntax", code: `let x = ;`, category: kairos.CatSyntax, errHas: "SyntaxError"},
		{name: "static import", code: `import fs from "fs"; fs.readFileSync("/etc/passwd")`, category: kairos.CatImport},
		{name: "dynamic import", code: `await import("node:fs")`, category: kairos.CatImport},
		{name: "type", code: `null.x`, category: kairos.CatType, errHas: "TypeError"},
		{name: "reference", code: `nope()`, category: kairos.CatReference, errHas: "nope"},
		{name: "runtime", code: `throw new Error("boom")`, category: kairos.CatRuntime, errHas: "boom"},
		{name: "rejected promise", code: `await Promise.reject(new RangeError("r"))`, category: kairos.CatRuntime, errHas: "RangeError"},
		{name: "no network globals", code: `output([typeof getJSON, typeof postJSON, typeof fetchWithAuth, typeof fetch])`, success: true, output: `["undefined","undefined","undefined","undefined"]`},
		{name: "no std os globals", code: `output([typeof std, typeof os, typeof __kairos_host, typeof __kairos_setup])`, success: true, output: `["undefined","undefined","undefined","undefined"]`},
		{name: "exit", code: `const std = await import("qjs:std"); std.exit(3)`, category: kairos.CatRuntime, errHas: "status 3"},
		{name: "budget global", code: `const b = budget(); output(b.tool_calls > 0 && b.ms > 0)`, success: true, output: `true`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, task(tc.code))
			if res.Success != tc.success || res.ErrorCategory != tc.category {
				t.Fatalf("success=%v category=%q, want %v %q (error %q)", res.Success, res.ErrorCategory, tc.success, tc.category, res.Error)
			}
			if tc.stdout != "" && res.Stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", res.Stdout, tc.stdout)
			}
			if tc.output != "" && string(res.Output) != tc.output {
				t.Errorf("output = %s, want %s", res.Output, tc.output)
			}
			if tc.errHas != "" && !strings.Contains(res.Error, tc.errHas) {
				t.Errorf("error %q does not contain %q", res.Error, tc.errHas)
			}
			if !res.Success && res.ExitCode == 0 {
				t.Errorf("failed cell has exit code 0")
			}
			if res.ID == "" {
				t.Errorf("no result ID")
			}
		})
	}
}

func TestRunInvalidTask(t *testing.T) {
	for _, tk := range []*kairos.CellTask{
		nil,
		{Code: "1", Verb: "PAY"},
		{Code: "1"},
		{Code: "  ", Verb: kairos.VerbBuild},
	} {
		_, err := shared.Run(context.Background(), tk)
		if kairos.ErrorCode(err) != kairos.EINVALID {
			t.Errorf("task %+v: error %v, want EINVALID", tk, err)
		}
	}
	for _, v := range kairos.Verbs {
		tk := task("1")
		tk.Verb = v
		if res := run(t, tk); !res.Success {
			t.Errorf("verb %s: %+v", v, res)
		}
	}
}

func TestSecretsNeverLeave(t *testing.T) {
	const secret = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	tests := []struct{ name, code string }{
		{"console", `const k = getSecret("API_KEY"); console.log(k, [k], {k})`},
		{"template literal", `const k = getSecret("API_KEY"); console.log(` + "`key=${k}`" + `)`},
		{"string concat", `const k = getSecret("API_KEY"); console.log("k:" + k)`},
		{"json", `const k = getSecret("API_KEY"); console.log(JSON.stringify({k}))`},
		{"output object", `const k = getSecret("API_KEY"); output({k})`},
		{"output string", `const k = getSecret("API_KEY"); output(String(k))`},
		{"stderr", `const k = getSecret("API_KEY"); console.error(String(k))`},
		{"error text", `const k = getSecret("API_KEY"); throw new Error("leak " + k)`},
		{"print", `const k = getSecret("API_KEY"); print(String(k))`},
		{"base64", `const k = String(getSecret("API_KEY")); const a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; let o = ""; for (let i = 0; i < k.length; i += 3) { const n = (k.charCodeAt(i) << 16) | ((k.charCodeAt(i+1)||0) << 8) | (k.charCodeAt(i+2)||0); o += a[(n>>18)&63] + a[(n>>12)&63] + (i+1 < k.length ? a[(n>>6)&63] : "=") + (i+2 < k.length ? a[n&63] : "="); } console.log("b64:" + o)`},
		{"hex", `const k = String(getSecret("API_KEY")); let h = ""; for (const c of k) h += c.charCodeAt(0).toString(16).padStart(2, "0"); output(h)`},
		{"url encoded", `const k = String(getSecret("API_KEY")) + "/&?"; console.log(encodeURIComponent(k))`},
		{"split lines", `const k = String(getSecret("API_KEY")); console.log(k.slice(0, 10)); console.log(k.slice(10, 20)); console.log(k.slice(20))`},
		{"split with labels", `const k = String(getSecret("API_KEY")); for (let i = 0; i < k.length; i += 9) console.log("part", i, k.slice(i, i + 9))`},
		{"spaced", `const k = String(getSecret("API_KEY")); console.log(k.split("").join(" "))`},
		{"checkpoint state", `const k = String(getSecret("API_KEY")); checkpoint({cursor: k, state: {k}})`},
		// Encodings no scrubber could recognise: they fail because the
		// cell never holds the value (sealed secrets), only a token.
		{"reversed", `const k = String(getSecret("API_KEY")); output(k.split("").reverse().join(""))`},
		{"char codes", `const k = String(getSecret("API_KEY")); output([...k].map(c => c.charCodeAt(0)))`},
		{"xor", `const k = String(getSecret("API_KEY")); output([...k].map(c => c.charCodeAt(0) ^ 42))`},
		{"rot13", `const k = String(getSecret("API_KEY")); output(k.replace(/[a-z]/gi, c => String.fromCharCode((c <= "Z" ? 90 : 122) >= (c = c.charCodeAt(0) + 13) ? c : c - 26)))`},
		{"base32", `const k = String(getSecret("API_KEY")); const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"; let bits = "", o = ""; for (const c of k) bits += c.charCodeAt(0).toString(2).padStart(8, "0"); for (let i = 0; i < bits.length; i += 5) o += A[parseInt(bits.slice(i, i + 5).padEnd(5, "0"), 2)]; output(o)`},
		{"one character per print", `const k = String(getSecret("API_KEY")); for (const c of k) console.log(c)`},
		{"length and comparison", `const k = getSecret("API_KEY"); output({len: k.length, starts: String(k).startsWith("sk-live"), eq: k == "` + secret + `"})`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := task(tc.code)
			tk.Secrets = map[string]string{"API_KEY": secret}
			res := run(t, tk)
			all := res.Stdout + res.Stderr + res.Error + string(res.Output)
			if res.Checkpoint != nil {
				all += res.Checkpoint.Cursor + string(res.Checkpoint.State)
			}
			for _, form := range []string{secret, b64, strings.TrimRight(b64, "="), hex.EncodeToString([]byte(secret)), url.QueryEscape(secret), secret[:12], secret[12:]} {
				if strings.Contains(all, form) {
					t.Fatalf("secret form %q leaked in %q", form, all)
				}
			}
			// Whatever the cell computed, it computed from a token: decode
			// the usual transforms of the output back and look again.
			for _, decoded := range testkit.Decodings(all, 42) {
				if strings.Contains(decoded, secret[:10]) {
					t.Fatalf("the secret comes back out of %q as %q", all, decoded)
				}
			}
			if strings.Contains(all, "starts\":true") || strings.Contains(all, "eq\":true") {
				t.Fatalf("the cell learned something about the value: %q", all)
			}
		})
	}
}

func TestLeakScanRejects(t *testing.T) {
	for _, code := range []string{
		`console.log(getSecret('API_KEY'))`,
		`console.log("x", getSecret("API_KEY").toString())`,
		`const s = process.env.__SECRETS__`,
	} {
		tk := task(code)
		tk.Secrets = map[string]string{"API_KEY": "abcdefghijkl"}
		res := run(t, tk)
		if res.Success || res.ErrorCategory != kairos.CatRejected || res.ExitCode != -1 {
			t.Errorf("%s: %+v", code, res)
		}
	}
}

func TestSecretHelpers(t *testing.T) {
	// The value is sealed: the cell sees the names, never the value (not
	// even by comparing to a guess).
	tk := task(`output({names: listSecrets(), eq: getSecret("A") == "alpha-value"})`)
	tk.Secrets = map[string]string{"A": "alpha-value", "B": "beta-value-2"}
	res := run(t, tk)
	if !res.Success || string(res.Output) != `{"names":["A","B"],"eq":false}` {
		t.Fatalf("%+v %s", res, res.Output)
	}
	tk = task(`getSecret("MISSING")`)
	tk.Secrets = map[string]string{"A": "alpha-value"}
	if res := run(t, tk); res.ErrorCategory != kairos.CatReference {
		t.Fatalf("missing secret: %+v", res)
	}
}

// TestCredentialsOffSecretsAbsent: without features.credentials_access
// getSecret and listSecrets do not exist, and a secret named in
// authSecret reaches nothing, even when the task carries secrets.
func TestCredentialsOffSecretsAbsent(t *testing.T) {
	tk := task(`output({g: typeof getSecret, l: typeof listSecrets, in: "getSecret" in globalThis})`)
	tk.Secrets = map[string]string{"A": "alpha-value"}
	tk.Credentials = false
	res := run(t, tk)
	if !res.Success || string(res.Output) != `{"g":"undefined","l":"undefined","in":false}` {
		t.Fatalf("credentials off: %+v %s", res, res.Output)
	}
	tk.Credentials = true
	res = run(t, tk)
	if !res.Success || string(res.Output) != `{"g":"function","l":"function","in":true}` {
		t.Fatalf("credentials on: %+v %s", res, res.Output)
	}
}

// netServer records requests and answers JSON.
func netServer(t *testing.T) (*httptest.Server, *sync.Map) {
	t.Helper()
	seen := &sync.Map{}
	mux := http.NewServeMux()
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			seen.Store("auth", a)
		}
		seen.Store("method", r.Method)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items":[1,2,3]}`)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 100_000)))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.org/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusInternalServerError)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, seen
}

func TestNetwork(t *testing.T) {
	srv, seen := netServer(t)
	base := srv.URL
	tests := []struct {
		name     string
		code     string
		methods  []string
		allow    []string
		budget   kairos.Budget
		success  bool
		category string
		output   string
	}{
		{name: "get json", code: `const d = await getJSON("` + base + `/data"); output(d.items.length)`, success: true, output: `3`},
		{name: "fetch", code: `const r = await fetch("` + base + `/data"); output([r.ok, r.status, (await r.json()).items[0]])`, success: true, output: `[true,200,1]`},
		{name: "auth secret injected", code: `await getJSON("` + base + `/data", "TOKEN"); output(1)`, success: true, output: `1`},
		{name: "http error", code: `await getJSON("` + base + `/fail")`, category: kairos.CatNetwork},
		{name: "off allow-list", code: `await getJSON("http://example.com/")`, category: kairos.CatNetwork},
		{name: "blocked payments", code: `await getJSON("https://api.stripe.com/v1/charges")`, allow: []string{"*.stripe.com"}, category: kairos.CatNetwork},
		{name: "blocked exchange", code: `await getJSON("https://api.binance.com/api/v3/ticker")`, allow: []string{"api.binance.com"}, category: kairos.CatNetwork},
		{name: "blocked bank", code: `await getJSON("https://www.chase.com/")`, allow: []string{"www.chase.com"}, category: kairos.CatNetwork},
		{name: "blocked login path", code: `await getJSON("` + base + `/oauth/token")`, category: kairos.CatNetwork},
		{name: "blocked login host", code: `await getJSON("https://login.example.com/")`, allow: []string{"*.example.com"}, category: kairos.CatNetwork},
		{name: "refusal is catchable", code: `try { await getJSON("http://example.com/") } catch (e) { output(e.name) }`, success: true, output: `"NetworkError"`},
		{name: "post refused by default", code: `await postJSON("` + base + `/data", {a: 1})`, category: kairos.CatNetwork},
		{name: "post allowed", code: `output((await postJSON("` + base + `/data", {a: 1})).items.length)`, methods: []string{"GET", "POST"}, success: true, output: `3`},
		{name: "file scheme", code: `await fetch("file:///etc/passwd")`, category: kairos.CatNetwork},
		{name: "redirect off allow-list", code: `await getJSON("` + base + `/redirect")`, category: kairos.CatNetwork},
		{name: "network call budget", code: `for (let i = 0; i < 5; i++) { try { await getJSON("` + base + `/data") } catch (e) {} }`, budget: kairos.Budget{MaxNetworkCalls: 3}, category: kairos.CatBudget},
		{name: "tool call budget", code: `for (let i = 0; i < 10; i++) listSecrets()`, budget: kairos.Budget{MaxToolCalls: 4}, category: kairos.CatBudget},
		{name: "bytes read budget", code: `await fetch("` + base + `/big")`, budget: kairos.Budget{MaxBytesRead: 1000}, category: kairos.CatBudget},
		{name: "bytes written budget", code: `await postJSON("` + base + `/data", "y".repeat(5000))`, methods: []string{"POST"}, budget: kairos.Budget{MaxBytesWritten: 100}, category: kairos.CatBudget},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := task(tc.code)
			tk.Secrets = map[string]string{"TOKEN": "tok-123456789"}
			tk.Network = kairos.NetworkGrant{Enabled: true, AllowHosts: append([]string{"127.0.0.1"}, tc.allow...), Methods: tc.methods}
			tk.Budget = tc.budget
			tk.Budget.TimeBudget = 5 * time.Second
			res := run(t, tk)
			if res.Success != tc.success || res.ErrorCategory != tc.category {
				t.Fatalf("success=%v category=%q, want %v %q (error %q)", res.Success, res.ErrorCategory, tc.success, tc.category, res.Error)
			}
			if tc.output != "" && string(res.Output) != tc.output {
				t.Errorf("output = %s, want %s", res.Output, tc.output)
			}
		})
	}
	if v, _ := seen.Load("auth"); v != "Bearer tok-123456789" {
		t.Errorf("Authorization header = %v", v)
	}
}

func TestCheckpoint(t *testing.T) {
	tk := task(`checkpoint({cursor: "page-3", stage: "fetch", completed: ["a", "b"], state: {seen: 3}}); output("partial")`)
	res := run(t, tk)
	cp := res.Checkpoint
	if !res.Success || cp == nil || cp.ContinuationID == "" || cp.Cursor != "page-3" || cp.Stage != "fetch" ||
		len(cp.Completed) != 2 || string(cp.State) != `{"seen":3}` || !strings.HasPrefix(cp.StateBlobRef, "sha256:") {
		t.Fatalf("%+v %+v", res, cp)
	}
	// Resume: the cell sees the checkpoint; a timeout after a checkpoint
	// keeps it.
	tk = task(`checkpoint({cursor: String(resume.state.seen + 1)}); for (;;) {}`)
	tk.ContinuationID = cp.ContinuationID
	tk.Resume = cp
	tk.Budget.TimeBudget = 100 * time.Millisecond
	res = run(t, tk)
	if res.Success || res.ErrorCategory != kairos.CatTimeout || res.Checkpoint == nil ||
		res.Checkpoint.Cursor != "4" || res.Checkpoint.ContinuationID != cp.ContinuationID {
		t.Fatalf("%+v %+v", res, res.Checkpoint)
	}
}

func TestHostFunctionArguments(t *testing.T) {
	tests := []struct {
		name, code, category string
	}{
		{"getSecret object", `getSecret({toString() { return "X" }})`, kairos.CatReference},
		{"getSecret no args", `getSecret()`, kairos.CatReference},
		{"sleep negative", `await sleep(-5)`, kairos.CatRuntime},
		{"sleep NaN", `await sleep(NaN)`, ""},
		{"sleep huge", `await sleep(1e300)`, kairos.CatTimeout},
		{"checkpoint huge state", `checkpoint({state: "x".repeat(300000)})`, kairos.CatRuntime},
		{"checkpoint junk", `checkpoint(42); checkpoint("s"); checkpoint(null)`, ""},
		{"output circular", `const a = {}; a.a = a; output(a)`, kairos.CatType},
		{"output bigint", `output(10n)`, ""},
		{"console symbol", `console.log(Symbol("s"), () => 1, new Error("e"))`, ""},
		{"huge string arg", `listSecrets("x".repeat(1 << 20))`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := task(tc.code)
			// Only the case that must time out gets a short budget: a
			// loaded machine must not reach the deadline in the others.
			tk.Budget.TimeBudget = 10 * time.Second
			if tc.category == kairos.CatTimeout {
				tk.Budget.TimeBudget = 300 * time.Millisecond
			}
			res := run(t, tk)
			if res.ErrorCategory != tc.category {
				t.Fatalf("category %q, want %q (error %q)", res.ErrorCategory, tc.category, res.Error)
			}
		})
	}
}

// abuse lists cells that must be contained, with the category they end in.
var abuse = []struct {
	name, code, category string
	budget               kairos.Budget
	check                func(t *testing.T, res *kairos.CellResult)
}{
	{name: "infinite loop", code: `for (;;) {}`, category: kairos.CatTimeout},
	{name: "infinite loop with try", code: `for (;;) { try { for (;;) {} } catch (e) {} }`, category: kairos.CatTimeout},
	{name: "busy timers", code: `setInterval(() => {}, 0)`, category: kairos.CatTimeout},
	{name: "regexp backtracking", code: `/(a+)+$/.test("a".repeat(40) + "b")`, category: kairos.CatTimeout},
	{name: "memory bomb", code: `const a = []; for (;;) a.push("x".repeat(1024) + a.length)`, category: kairos.CatMemory,
		budget: kairos.Budget{MemoryLimit: 16 << 20}},
	// Large allocations do little bytecode between interrupt polls: the
	// allocator must refuse them at the limit (memlimit.go).
	{name: "megabyte strings", code: `const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length)`, category: kairos.CatMemory,
		budget: kairos.Budget{MemoryLimit: 16 << 20}},
	{name: "string doubling", code: `let s = "x"; for (;;) s += s`, category: kairos.CatMemory, budget: kairos.Budget{MemoryLimit: 16 << 20}},
	{name: "typed array bomb", code: `new Uint8Array(1 << 30)`, category: kairos.CatMemory, budget: kairos.Budget{MemoryLimit: 16 << 20}},
	{name: "100 MB to stdout", code: `const s = "y".repeat(1 << 20); for (let i = 0; i < 100; i++) console.log(s)`, category: kairos.CatBudget,
		check: func(t *testing.T, res *kairos.CellResult) {
			if int64(len(res.Stdout)) > kairos.DefaultBudget().MaxOutputBytes+100 {
				t.Errorf("stdout is %d bytes", len(res.Stdout))
			}
		}},
	{name: "print flood", code: `for (;;) print("z".repeat(1000))`, category: kairos.CatBudget},
	{name: "deep recursion", code: `function f(n) { return f(n + 1) + 1 } f(0)`, category: kairos.CatMemory},
	{name: "read /etc/passwd", code: `const std = await import("qjs:std"); const s = std.loadFile("/etc/passwd"); if (s) output(s); else throw new Error("no file")`, category: kairos.CatRuntime},
	{name: "open /etc/passwd", code: `const os = await import("qjs:os"); const fd = os.open("/etc/passwd", os.O_RDONLY); if (fd >= 0) output("opened"); else throw new Error("no fd " + fd)`, category: kairos.CatRuntime},
	{name: "dot dot", code: `const std = await import("qjs:std"); for (const p of ["../../../../etc/passwd", "./../etc/hostname", "/proc/self/environ"]) { if (std.loadFile(p) !== null) output(p) } throw new Error("none")`, category: kairos.CatRuntime},
	{name: "readdir root", code: `const os = await import("qjs:os"); const [l, err] = os.readdir("/"); if (err === 0 && l.length > 2) output(l); else throw new Error("none")`, category: kairos.CatRuntime},
	{name: "symlink", code: `const os = await import("qjs:os"); const e = os.symlink ? os.symlink("/etc/passwd", "p") : "absent"; const std = await import("qjs:std"); if (std.loadFile("p") !== null) output("read"); throw new Error("symlink " + e)`, category: kairos.CatRuntime},
	{name: "write a file", code: `const std = await import("qjs:std"); const f = std.open("/tmp/kairos-cell-test", "w"); if (f) output("wrote"); else throw new Error("no file")`, category: kairos.CatRuntime},
	{name: "import host file", code: `await import("/etc/passwd")`, category: kairos.CatImport},
	{name: "getenv", code: `const std = await import("qjs:std"); const e = std.getenviron(); if (Object.keys(e).length) output(e); else throw new Error("empty")`, category: kairos.CatRuntime},
	{name: "network disabled", code: `await getJSON("http://127.0.0.1/")`, category: kairos.CatReference},
	{name: "secret exfiltration", code: `output(String(getSecret("S")))`, category: "",
		check: func(t *testing.T, res *kairos.CellResult) {
			if strings.Contains(string(res.Output), "hunter2-very-secret") {
				t.Errorf("secret leaked: %s", res.Output)
			}
		}},
}

// TestAbuseContained runs every abuse cell concurrently beside ordinary
// cells; each must end in its category, the ordinary cells must succeed,
// and the process must return to its goroutine baseline.
func TestAbuseContained(t *testing.T) {
	runtime.GC()
	baseline := runtime.NumGoroutine()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var ordinaryFailures []string
	var mu sync.Mutex
	ordinary := 0
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := shared.Run(context.Background(), task(`function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } output(fib(15))`))
				mu.Lock()
				ordinary++
				if err != nil || !res.Success || string(res.Output) != "610" {
					ordinaryFailures = append(ordinaryFailures, fmt.Sprintf("%v %+v", err, res))
				}
				mu.Unlock()
			}
		}()
	}
	t.Run("group", func(t *testing.T) {
		for _, tc := range abuse {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tk := task(tc.code)
				tk.Secrets = map[string]string{"S": "hunter2-very-secret"}
				tk.Budget = tc.budget
				if tc.category != kairos.CatTimeout {
					// Must end on its own limit (memory, output) first: a
					// generous time budget keeps a loaded machine (-race,
					// two cores, every case in parallel) from reaching
					// the time limit before it. The memory bomb's cell
					// takes about 0.5 s alone but took over 10 s beside
					// the others under stress -c 2.
					tk.Budget.TimeBudget = time.Minute
				} else {
					tk.Budget.TimeBudget = time.Second
				}
				res := run(t, tk)
				if res.ErrorCategory != tc.category {
					t.Fatalf("category %q, want %q (error %q, output %s)", res.ErrorCategory, tc.category, res.Error, res.Output)
				}
				if tc.check != nil {
					tc.check(t, res)
				}
			})
		}
	})
	close(stop)
	wg.Wait()
	if len(ordinaryFailures) > 0 || ordinary == 0 {
		t.Fatalf("%d ordinary cells, failures: %v", ordinary, ordinaryFailures)
	}
	// Ended cells' goroutines wind down on their own time: wait for the
	// count to fall back (until the test's deadline), then report a leak.
	_ = testkit.Poll(testkit.Deadline(t), func() bool {
		runtime.Gosched()
		return runtime.NumGoroutine() <= baseline
	})
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, baseline %d\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

func TestConcurrentCells(t *testing.T) {
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tk := task(fmt.Sprintf(`const o = JSON.parse(JSON.stringify({i: %d, xs: Array.from({length: 100}, (_, k) => k)})); output(o.i + o.xs.length)`, i))
			res, err := shared.Run(context.Background(), tk)
			if err != nil || !res.Success || string(res.Output) != fmt.Sprint(i+100) {
				errs <- fmt.Sprintf("%d: %v %+v", i, err, res)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestDeadlines(t *testing.T) {
	tk := task(`await sleep(50); output("woke")`)
	res := run(t, tk)
	if !res.Success || string(res.Output) != `"woke"` || res.ToolCalls != 1 {
		t.Fatalf("%+v", res)
	}
	tk = task(`await sleep(10000)`)
	tk.Budget = kairos.Budget{DeadlineAt: time.Now().Add(100 * time.Millisecond)}
	if res := run(t, tk); res.ErrorCategory != kairos.CatTimeout {
		t.Fatalf("deadline: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	res, err := shared.Run(ctx, task(`for (;;) {}`))
	if err != nil || res.ErrorCategory != kairos.CatTimeout {
		t.Fatalf("cancel: %v %+v", err, res)
	}
}

func TestCategorize(t *testing.T) {
	for msg, want := range map[string]string{
		"SyntaxError: unexpected token":                      kairos.CatSyntax,
		"SyntaxError: import statements only in modules":     kairos.CatImport,
		"ReferenceError: could not load module filename 'x'": kairos.CatImport,
		"TypeError: x is not a function":                     kairos.CatType,
		"ReferenceError: y is not defined":                   kairos.CatReference,
		"InternalError: out of memory":                       kairos.CatMemory,
		"RangeError: Maximum call stack size exceeded":       kairos.CatMemory,
		"InternalError: interrupted":                         kairos.CatTimeout,
		"NetworkError: host x is not on the allow-list":      kairos.CatNetwork,
		"Error: boom": kairos.CatRuntime,
		"":            kairos.CatRuntime,
	} {
		if got := Categorize(msg); got != want {
			t.Errorf("Categorize(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestRunnerLifecycle(t *testing.T) {
	ctx := context.Background()
	r, err := New(ctx, Config{PoolSize: -1, CacheDir: engineCache})
	if err != nil {
		t.Fatal(err)
	}
	if r.eng != nil {
		t.Fatal("New compiled the engine; it must be lazy")
	}
	res, err := r.Run(ctx, task(`output(1)`))
	if err != nil || !res.Success {
		t.Fatalf("%v %+v", err, res)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, task(`1`)); kairos.ErrorCode(err) != kairos.EUNAVAILABLE {
		t.Fatalf("run after close: %v", err)
	}
}

func FuzzPatchLayout(f *testing.F) {
	f.Add(qjsWasm[:64])
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x00\x03\x06\x07\x01\x7f\x01\x41\x80\x08\x0b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = patchLayout(b, 16)
		if m, err := parseModule(b); err == nil {
			_, _ = findPollFunction(m)
			_, _, _ = findHandler(m)
		}
	})
}

func FuzzBlockedCategory(f *testing.F) {
	for _, s := range []string{"https://api.stripe.com/v1", "http://127.0.0.1/oauth/token", "https://example.com/a/b", "http://login.x.org/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		_ = blockedCategory(u, []string{"evil.example"})
		_ = checkURL(u, &kairos.NetworkGrant{Enabled: true, AllowHosts: []string{"*.example.com"}})
	})
}

var _ = json.Valid

// TestEngineClosesRuntimeOnFailure: when construction fails after the
// runtime exists, the runtime (and its compilation cache) are closed: the
// runtime refuses work afterwards.
func TestEngineClosesRuntimeOnFailure(t *testing.T) {
	ctx := context.Background()
	var rt wazero.Runtime
	afterRuntime = func(r wazero.Runtime) error { rt = r; return errors.New("injected failure") }
	defer func() { afterRuntime = nil }()
	if e, err := newEngine(ctx, "", 1024, 16); err == nil || e != nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("newEngine = %v, %v; want the injected failure", e, err)
	}
	if rt == nil {
		t.Fatal("the hook never saw the runtime")
	}
	if _, err := rt.CompileModule(ctx, qjsWasm); err == nil {
		t.Fatal("the runtime of a failed engine still compiles modules: it was not closed")
	}
	// A module that cannot be read fails before any runtime exists.
	if _, err := parseModule(qjsWasm[:len(qjsWasm)/2]); err == nil {
		t.Fatal("a truncated module parsed")
	}
}

// TestSealedSecretsUnsealOnlyOnTheWayOut: a token put into a header, the
// URL or the body of a request reaches the server as the real value; an
// endpoint that echoes it back cannot hand the value to the cell.
func TestSealedSecretsUnsealOnlyOnTheWayOut(t *testing.T) {
	const secret = "tok-sealed-7788991122"
	var got sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.Store("header", r.Header.Get("X-Key"))
		got.Store("query", r.URL.Query().Get("key"))
		got.Store("body", string(body))
		w.Header().Set("X-Echo", r.Header.Get("X-Key"))
		fmt.Fprintf(w, `{"echo":%q,"q":%q}`, string(body), r.URL.Query().Get("key"))
	}))
	defer srv.Close()
	code := `const k = getSecret("TOKEN");
const r = await fetch("` + srv.URL + `/?key=" + k, {method: "POST", headers: {"X-Key": ` + "`${k}`" + `}, body: "v=" + k});
const text = await r.text();
output({text, echoHeader: r.headers.get("x-echo"), rev: text.split("").reverse().join("")});`
	tk := task(code)
	tk.Secrets = map[string]string{"TOKEN": secret}
	tk.Network = kairos.NetworkGrant{Enabled: true, AllowHosts: []string{"127.0.0.1"}, Methods: []string{"GET", "POST"}}
	tk.Budget.TimeBudget = 5 * time.Second
	res := run(t, tk)
	if !res.Success {
		t.Fatalf("%+v", res)
	}
	for _, k := range []string{"header", "query", "body"} {
		if v, _ := got.Load(k); !strings.Contains(fmt.Sprint(v), secret) {
			t.Errorf("the server's %s = %q, want the unsealed secret", k, v)
		}
	}
	out := string(res.Output)
	for _, d := range testkit.Decodings(out, 42) {
		if strings.Contains(d, secret[:10]) {
			t.Fatalf("the echoed secret reached the cell's output: %s", out)
		}
	}
}
