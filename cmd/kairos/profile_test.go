package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProfilingConfig(t *testing.T) {
	for _, tc := range []struct {
		name, pprof, addr, want string
	}{
		{"bad value", "yes", "127.0.0.1:0", "KAIROS_PPROF must be on or off"},
		{"public address", "on", "0.0.0.0:8080", "loopback"},
		{"no host", "on", ":8080", "loopback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["KAIROS_PPROF"], e.vars["KAIROS_HTTP_ADDR"] = tc.pprof, tc.addr
			if code := e.main().Main(context.Background(), []string{"run"}); code != 2 {
				t.Fatalf("exit = %d, want 2; stderr %q", code, e.logs.String())
			}
			if !strings.Contains(e.logs.String(), tc.want) {
				t.Fatalf("stderr %q lacks %q", e.logs.String(), tc.want)
			}
		})
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:9", "localhost:8080"} {
		if !loopback(addr) {
			t.Errorf("loopback(%q) = false", addr)
		}
	}
}

func TestPprofEndpointsOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		e := newEnv(t)
		if on {
			e.vars["KAIROS_PPROF"] = "on"
		}
		addr := e.start()
		resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if on && (resp.StatusCode != 200 || !strings.Contains(string(body), "heap profile")) {
			t.Fatalf("KAIROS_PPROF=on: %d %.200s", resp.StatusCode, body)
		}
		if !on && resp.StatusCode != http.StatusNotFound {
			t.Fatalf("KAIROS_PPROF unset: /debug/pprof/heap answered %d", resp.StatusCode)
		}
	}
}

func TestCPUProfileWrittenAtExit(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	e.vars["KAIROS_CPU_PROFILE"] = path
	if code := e.main().Main(context.Background(), []string{"migrate"}); code != 0 {
		t.Fatalf("exit = %d: %s", code, e.logs.String())
	}
	// A profile is a gzipped protocol buffer (runtime/pprof).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 20 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("not a gzipped profile: % x", b[:min(len(b), 8)])
	}
}
