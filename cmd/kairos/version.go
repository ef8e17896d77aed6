package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/kairos-agent/kairos"
)

// writeVersion prints `kairos version` from the binary's build info: the
// release, the module's version (v1.2.3 from `go install …@v1.2.3`,
// "(devel)" from a checkout), the commit and its time (vcs.revision and
// vcs.time, stamped by go build in a git checkout) and the Go toolchain.
func writeVersion(w io.Writer, bi *debug.BuildInfo, ok bool) {
	fmt.Fprintln(w, "kairos", kairos.Version)
	if !ok || bi == nil {
		fmt.Fprintln(w, "build info: none in this binary")
		return
	}
	module := bi.Main.Version
	if module == "" {
		module = "(unknown)"
	}
	fmt.Fprintf(w, "module   %s %s\n", bi.Main.Path, module)
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	switch rev := set["vcs.revision"]; {
	case rev == "":
		fmt.Fprintln(w, "commit   unknown: built without version control information (go build -buildvcs=false, or not in a git checkout)")
	default:
		when := set["vcs.time"]
		if when == "" {
			when = "time unknown"
		}
		dirty := ""
		if set["vcs.modified"] == "true" {
			dirty = ", with uncommitted changes"
		}
		fmt.Fprintf(w, "commit   %s (%s%s)\n", rev, when, dirty)
	}
	goos, goarch := set["GOOS"], set["GOARCH"]
	fmt.Fprintf(w, "go       %s %s/%s\n", bi.GoVersion, goos, goarch)
}
