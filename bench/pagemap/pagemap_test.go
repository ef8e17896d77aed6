package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestOwnProcess: the tool reads its own (the test binary's) resident
// pages: the running code is resident, and the report names .text and
// the pclntab's tables (go test strips the binary it runs of symbols, so
// packages are TestPackageBytes's).
func TestOwnProcess(t *testing.T) {
	res, err := residentPages(os.Getpid())
	if err != nil {
		t.Skipf("no pagemap here: %v", err)
	}
	if len(res) == 0 {
		t.Skip("pagemap shows no present pages (not root?)")
	}
	var out bytes.Buffer
	if err := run(&out, os.Getpid(), "", 400); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".text", "function names", "pc tables"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"net/http.(*Server).Serve":                         "net/http",
		"github.com/kairos-agent/kairos/bot.(*Bot).worker": "github.com/kairos-agent/kairos/bot",
		"runtime.mallocgc":                                 "runtime",
		"go:func.*":                                        "go:func",
		"type:*":                                           "type:*",
		"sqlite3_open_v2":                                  "sqlite3_open_v2",
		"gopkg.in/yaml%2ev3.(*parser).parse":               "gopkg.in/yaml%2ev3",
		"github.com/go-analyze/charts.filterSeriesList[...]": "github.com/go-analyze/charts",
	} {
		if got := packageOf(name); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestCountSpansPages(t *testing.T) {
	res := map[uint64]bool{0x1000: true, 0x3000: true}
	s := count("x", 0x1800, 0x3001, res)
	if s.pages != 3 || s.resident != 2 {
		t.Fatalf("%+v", s)
	}
}

// TestPackageBytes: a symbol's bytes count for its package only on its
// resident pages, a symbol across a page boundary in part.
func TestPackageBytes(t *testing.T) {
	res := map[uint64]bool{0x1000: true}
	got := packageBytes([]symbol{
		{0x1000, 0x100, "runtime.mallocgc"},
		{0x1f00, 0x200, "net/http.(*Server).Serve"}, // 0x100 on the resident page
		{0x2100, 0x100, "net/http.serve"},           // not resident
	}, res)
	want := []pkgBytes{{"net/http", 0x100}, {"runtime", 0x100}} // a tie: by name
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("%+v, want %+v", got, want)
	}
}
