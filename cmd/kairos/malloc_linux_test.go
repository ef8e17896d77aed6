//go:build linux && cgo

package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// arenasChild, when set, makes TestMallocArenas print the arena count
// of a process started with the operator's own malloc settings.
const arenasChild = "KAIROS_TEST_ARENAS_CHILD"

// TestMallocArenas: however many threads allocate in C at once, the
// process keeps one malloc arena; an operator's MALLOC_ARENA_MAX
// or GLIBC_TUNABLES arena_max is left to glibc.
func TestMallocArenas(t *testing.T) {
	if os.Getenv(arenasChild) != "" {
		os.Stdout.WriteString("arenas=" + strconv.Itoa(mallocArenas(16)) + "\n")
		return
	}
	if os.Getenv("MALLOC_ARENA_MAX") != "" || strings.Contains(os.Getenv("GLIBC_TUNABLES"), "arena_max") {
		t.Skip("the test's own environment sets the arena cap")
	}
	for _, threads := range []int{2, 8, 16, 48} {
		n := mallocArenas(threads)
		if n < 0 {
			t.Skip("not glibc: no malloc arenas to count")
		}
		if n != 1 {
			t.Fatalf("after %d threads allocated at once: %d malloc arenas, want 1", threads, n)
		}
	}
	for _, env := range []string{"MALLOC_ARENA_MAX=6", "GLIBC_TUNABLES=glibc.malloc.arena_max=6"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMallocArenas$")
		cmd.Env = append(os.Environ(), arenasChild+"=1", env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: child: %v\n%s", env, err, out)
		}
		_, v, ok := strings.Cut(string(out), "arenas=")
		if !ok {
			t.Fatalf("%s: child printed no count:\n%s", env, out)
		}
		n, _ := strconv.Atoi(strings.Fields(v)[0])
		if n <= 1 || n > 6 {
			t.Errorf("%s: %d malloc arenas after 16 threads, want the operator's cap (2 to 6)", env, n)
		}
	}
}
