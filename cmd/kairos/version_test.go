package main

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionFromBuildInfo: `kairos version` says the module version, the
// commit and its time from the binary's build info, and says why when
// the build has none (it printed only "kairos 0.1.0-dev").
func TestVersionFromBuildInfo(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	mod := debug.Module{Path: "github.com/kairos-agent/kairos", Version: "v1.4.2"}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: mod, Settings: settings("GOOS", "linux", "GOARCH", "arm64",
			"vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2026-11-20T10:00:00Z", "vcs.modified", "false")},
			[]string{"module   github.com/kairos-agent/kairos v1.4.2", "commit   0123456789abcdef0123456789abcdef01234567 (2026-11-20T10:00:00Z)\n", "go       go1.26.8 linux/arm64"}},
		{"checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: mod.Path, Version: "(devel)"},
			Settings: settings("vcs.revision", "abc", "vcs.time", "2026-11-21T09:00:00Z", "vcs.modified", "true")},
			[]string{"(devel)", "commit   abc (2026-11-21T09:00:00Z, with uncommitted changes)"}},
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: mod}, []string{"commit   unknown: built without version control information"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeVersion(&b, tc.bi, true)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
	e := newEnv(t)
	if code := e.main().Main(context.Background(), []string{"version"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"kairos ", "\nmodule ", "\ncommit ", "\ngo       go1."} {
		if !strings.Contains(e.out.String(), w) {
			t.Errorf("kairos version lacks %q:\n%s", w, e.out.String())
		}
	}
}
