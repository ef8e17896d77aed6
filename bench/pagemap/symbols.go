package main

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// symbol is one line of go tool nm -size: address, size, name.
type symbol struct {
	addr, size uint64
	name       string
}

func parseNM(out []byte) []symbol {
	var syms []symbol
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || size == 0 {
			continue
		}
		syms = append(syms, symbol{addr, size, strings.Join(f[3:], " ")})
	}
	return syms
}

// packageOf is the Go package a symbol belongs to: the import path up to
// the first dot after its last slash ("net/http.(*Server).Serve" is
// net/http), or the prefix of a linker symbol ("go:func.*" is go:func,
// "type:*" is type:). C symbols are their own name.
func packageOf(name string) string {
	for _, p := range []string{"go:", "type:"} {
		if strings.HasPrefix(name, p) {
			head, _, _ := strings.Cut(name, ".")
			return head
		}
	}
	slash := strings.LastIndex(name, "/")
	if i := strings.Index(name[slash+1:], "."); i >= 0 {
		return name[:slash+1+i]
	}
	return name
}
