package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	pageSize = 4096
	pageKB   = pageSize / 1024
)

// residentPages returns the start addresses of the pages of pid's own
// executable mappings that are present in memory (pagemap bit 63).
func residentPages(pid int) (map[uint64]bool, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, err
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	res := map[uint64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || filepath.Clean(f[5]) != exe {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("maps line %q", sc.Text())
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("maps line %q", sc.Text())
		}
		entries := make([]byte, (end-start)/pageSize*8)
		if _, err := pm.ReadAt(entries, int64(start/pageSize*8)); err != nil {
			return nil, fmt.Errorf("pagemap: %w", err)
		}
		for i := 0; i < len(entries); i += 8 {
			if binary.LittleEndian.Uint64(entries[i:])&(1<<63) != 0 {
				res[start+uint64(i/8)*pageSize] = true
			}
		}
	}
	return res, sc.Err()
}

// sections counts the resident pages of each loaded section of bin.
func sections(bin string, res map[uint64]bool) ([]span, error) {
	ef, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	var out []span
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Size < pageSize {
			continue // not loaded (debug info), or smaller than a page
		}
		out = append(out, count(s.Name, s.Addr, s.Addr+s.Size, res))
	}
	return out, nil
}

// pclnParts splits .gopclntab by its header (Go 1.20 and later): function
// names, compilation units, file names, pc-value tables, and the function
// table with its per-function records.
func pclnParts(bin string, res map[uint64]bool) ([]span, error) {
	ef, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	sec := ef.Section(".gopclntab")
	if sec == nil {
		return nil, fmt.Errorf("no .gopclntab")
	}
	hdr := make([]byte, 8+8*8)
	if _, err := sec.ReadAt(hdr, 0); err != nil {
		return nil, err
	}
	if m := binary.LittleEndian.Uint32(hdr); m != 0xfffffff1 || hdr[7] != 8 {
		return nil, fmt.Errorf("pclntab magic %#x, pointer size %d: not a 64-bit Go 1.20+ table", m, hdr[7])
	}
	field := func(i int) uint64 { return binary.LittleEndian.Uint64(hdr[8+i*8:]) }
	names := []string{"function names", "units", "file names", "pc tables", "functions"}
	offs := []uint64{field(3), field(4), field(5), field(6), field(7), sec.Size}
	out := make([]span, len(names))
	for i, n := range names {
		out[i] = count(n, sec.Addr+offs[i], sec.Addr+offs[i+1], res)
	}
	return out, nil
}
