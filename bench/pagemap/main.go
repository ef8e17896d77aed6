package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

func main() {
	pid := flag.Int("pid", 0, "the process to inspect")
	bin := flag.String("bin", "", "its executable (default: /proc/PID/exe)")
	top := flag.Int("top", 40, "packages to list")
	flag.Parse()
	if *pid <= 0 {
		fmt.Fprintln(os.Stderr, "pagemap: -pid is required")
		os.Exit(2)
	}
	if err := run(os.Stdout, *pid, *bin, *top); err != nil {
		fmt.Fprintln(os.Stderr, "pagemap:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, pid int, bin string, top int) error {
	if bin == "" {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil {
			return err
		}
		bin = exe
	}
	res, err := residentPages(pid)
	if err != nil {
		return err
	}
	secs, err := sections(bin, res)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "resident pages of the executable: %d KB\n\nby section (resident of size):\n", len(res)*pageKB)
	for _, s := range secs {
		fmt.Fprintf(w, "  %-16s %7d of %7d KB\n", s.name, s.resident*pageKB, s.pages*pageKB)
	}
	if parts, err := pclnParts(bin, res); err == nil {
		fmt.Fprintln(w, "\n.gopclntab by table:")
		for _, s := range parts {
			fmt.Fprintf(w, "  %-16s %7d of %7d KB\n", s.name, s.resident*pageKB, s.pages*pageKB)
		}
	}
	var stderr strings.Builder
	cmd := exec.Command("go", "tool", "nm", "-size", "-sort", "address", bin)
	cmd.Stderr = &stderr
	nm, err := cmd.Output()
	if strings.Contains(stderr.String(), "no symbol") {
		fmt.Fprintln(w, "\nno symbol table (a stripped binary, or one go test ran): no packages")
		return nil
	}
	if err != nil {
		return fmt.Errorf("go tool nm %s: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	by := packageBytes(parseNM(nm), res)
	fmt.Fprintf(w, "\nsymbol bytes on resident pages, by package (top %d):\n", top)
	for i, p := range by {
		if i == top {
			break
		}
		fmt.Fprintf(w, "  %7d KB  %s\n", p.bytes/1024, p.pkg)
	}
	return nil
}

// span is a named range of the executable with its resident page count.
type span struct {
	name            string
	pages, resident int
}

// count fills in a span of [lo, hi) from the resident set.
func count(name string, lo, hi uint64, res map[uint64]bool) span {
	s := span{name: name}
	for a := lo &^ (pageSize - 1); a < hi; a += pageSize {
		s.pages++
		if res[a] {
			s.resident++
		}
	}
	return s
}

// pkgBytes is a package's symbol bytes on resident pages.
type pkgBytes struct {
	pkg   string
	bytes uint64
}

func packageBytes(syms []symbol, res map[uint64]bool) []pkgBytes {
	by := map[string]uint64{}
	for _, s := range syms {
		for a := s.addr; a < s.addr+s.size; {
			end := min((a&^(pageSize-1))+pageSize, s.addr+s.size)
			if res[a&^(pageSize-1)] {
				by[packageOf(s.name)] += end - a
			}
			a = end
		}
	}
	out := make([]pkgBytes, 0, len(by))
	for p, b := range by {
		out = append(out, pkgBytes{p, b})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].bytes > out[j].bytes || out[i].bytes == out[j].bytes && out[i].pkg < out[j].pkg
	})
	return out
}
