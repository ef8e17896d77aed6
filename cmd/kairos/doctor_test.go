package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var doctorChecks = []string{"environment", "policy", "database", "http", "model", "telegram", "search"}

// doctorLines runs kairos doctor and returns its exit status and its
// lines by check name, failing when a check has no line or two.
func doctorLines(t *testing.T, e *env) (int, map[string]string) {
	t.Helper()
	e.out.Reset()
	code := e.main().Main(context.Background(), []string{"doctor", "--timeout", "30s"})
	lines := strings.Split(strings.TrimRight(e.out.String(), "\n"), "\n")
	if len(lines) != len(doctorChecks) {
		t.Fatalf("%d lines, want one per check (%d):\n%s", len(lines), len(doctorChecks), e.out.String())
	}
	byName := map[string]string{}
	for i, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		if name != doctorChecks[i] {
			t.Fatalf("line %d is %q, want the %s check:\n%s", i+1, l, doctorChecks[i], e.out.String())
		}
		byName[name] = l
	}
	for _, secret := range []string{e.vars["TELEGRAM_BOT_TOKEN"], e.vars["OPENAI_API_KEY"]} {
		if secret != "" && strings.Contains(e.out.String()+e.logs.String(), secret) {
			t.Fatal("a secret is in doctor's output")
		}
	}
	return code, byName
}

// TestDoctorOneLinePerCheck: kairos doctor prints one line per check
// (environment, policy, database, HTTP address, model endpoint, Telegram,
// search), exits 0 when only warnings, and creates nothing; each failure
// is named on its own line and exits 1, a bad environment 2 (there was no
// doctor).
func TestDoctorOneLinePerCheck(t *testing.T) {
	e := sqliteEnv(t)
	if code, out := runOut(e, "migrate"); code != 0 {
		t.Fatal(out)
	}
	data := e.vars["KAIROS_DATA_DIR"]
	before, _ := os.ReadDir(data)
	code, lines := doctorLines(t, e)
	if code != 0 {
		t.Fatalf("healthy: exit %d:\n%s", code, e.out.String())
	}
	for name, want := range map[string]string{"environment": " ok ", "policy": " ok ", "database": "(current)", "http": " ok ",
		"model": "answers", "telegram": "Telegram accepts", "search": " warn "} {
		if !strings.Contains(lines[name], want) {
			t.Errorf("%s line %q lacks %q", name, lines[name], want)
		}
	}
	if after, _ := os.ReadDir(data); len(after) != len(before) {
		t.Errorf("doctor changed the data folder: %v -> %v", before, after)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() }) // not defer: the subtests run in parallel, after this function returns
	badPolicy := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(badPolicy, []byte("access:\n  bogus: 1\n"), 0o600)
	for name, tc := range map[string]struct {
		setup func(e *env)
		code  int
		check string
		want  string
	}{
		"refused token":  {func(e *env) { e.tg.InjectError("getMe", 1, 401, "Unauthorized") }, 1, "telegram", "FAIL  Telegram refused TELEGRAM_BOT_TOKEN"},
		"refused key":    {func(e *env) { e.llm.SetAPIKey("sk-right"); e.vars["OPENAI_API_KEY"] = "sk-wrong-key" }, 1, "model", "refused the API key: check OPENAI_API_KEY"},
		"model down":     {func(e *env) { e.vars["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1" }, 1, "model", "FAIL  http://127.0.0.1:1/v1 does not answer"},
		"busy address":   {func(e *env) { e.vars["KAIROS_HTTP_ADDR"] = busy.Addr().String() }, 1, "http", "FAIL  KAIROS_HTTP_ADDR " + busy.Addr().String()},
		"bad policy":     {func(e *env) { e.vars["KAIROS_POLICY"] = badPolicy }, 1, "policy", "FAIL  " + badPolicy + ":2:3"},
		"missing policy": {func(e *env) { e.vars["KAIROS_POLICY"] = badPolicy + ".nope" }, 1, "policy", "no such file (kairos run refuses to start)"},
		"bad variable":   {func(e *env) { e.vars["KAIROS_LOG_FORMAT"] = "xml" }, 2, "environment", "FAIL  KAIROS_LOG_FORMAT"},
		"no database":    {func(e *env) { e.vars["KAIROS_DATA_DIR"] = filepath.Join(t.TempDir(), "none") }, 0, "database", "none yet at"},
	} {
		t.Run(name, func(t *testing.T) {
			e := sqliteEnv(t)
			tc.setup(e)
			code, lines := doctorLines(t, e)
			if code != tc.code || !strings.Contains(lines[tc.check], tc.want) {
				t.Fatalf("exit %d (want %d); %s line %q lacks %q:\n%s", code, tc.code, tc.check, lines[tc.check], tc.want, e.out.String())
			}
		})
	}
}
