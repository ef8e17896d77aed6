package sandbox

import "errors"

// The WebAssembly binary format, the little of it the engine reads.

// Section ids of the binary format (WebAssembly core spec, 5.5.2).
const (
	secCustom   byte = 0
	secType     byte = 1
	secImport   byte = 2
	secFunction byte = 3
	secTable    byte = 4
	secMemory   byte = 5
	secGlobal   byte = 6
	secExport   byte = 7
	secStart    byte = 8
	secElement  byte = 9
	secCode     byte = 10
	secData     byte = 11
)

// section is one section of a module: its id and its body.
type section struct {
	id   byte
	body []byte
}

// sections splits a module into its sections, in order. It is the one
// walk over the format in this package: parseModule and patchLayout both
// start from it.
func sections(mod []byte) ([]section, error) {
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	var out []section
	for i := 8; i < len(mod); {
		id := mod[i]
		size, n := uleb(mod[i+1:])
		if n == 0 {
			return nil, errors.New("bad section header")
		}
		start := i + 1 + n
		end := start + int(size)
		if end > len(mod) || end < start {
			return nil, errors.New("truncated section")
		}
		out = append(out, section{id: id, body: mod[start:end]})
		i = end
	}
	return out, nil
}

// wasmModule is the little of a module's structure the engine needs.
type wasmModule struct {
	memMin uint32   // initial pages of the (one) memory
	nimp   uint32   // imported functions (they come first in the index space)
	sig    []bool   // per defined function: is it (i32) -> i32
	sig2   []bool   // per defined function: is it (i32, i32) -> i32
	bodies [][]byte // per defined function
	table  [][2]uint32
	// exports maps exported function names to function indices.
	exports map[string]uint32
}

// parseModule reads the sections the engine needs from mod.
func parseModule(mod []byte) (*wasmModule, error) {
	bad := errors.New("unexpected wasm module structure")
	all, err := sections(mod)
	if err != nil {
		return nil, err
	}
	secs := map[byte][]byte{}
	for _, sec := range all {
		if _, ok := secs[sec.id]; !ok {
			secs[sec.id] = sec.body
		}
	}
	r := &reader{}
	m := &wasmModule{}
	// Types.
	r.b = secs[secType]
	var one, two []bool
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		if r.byte() != 0x60 {
			return nil, bad
		}
		ps := r.bytes(int(r.u()))
		rs := r.bytes(int(r.u()))
		one = append(one, string(ps) == "\x7f" && string(rs) == "\x7f")
		two = append(two, string(ps) == "\x7f\x7f" && string(rs) == "\x7f")
	}
	// Imports: functions only.
	r.b = secs[secImport]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		r.bytes(int(r.u()))
		r.bytes(int(r.u()))
		if r.byte() != 0 {
			return nil, bad
		}
		r.u()
		m.nimp++
	}
	// Functions.
	r.b = secs[secFunction]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		t := r.u()
		if t >= uint64(len(one)) {
			return nil, bad
		}
		m.sig = append(m.sig, one[t])
		m.sig2 = append(m.sig2, two[t])
	}
	// Code.
	r.b = secs[secCode]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		m.bodies = append(m.bodies, r.bytes(int(r.u())))
	}
	// Elements: active segments of function indices at i32.const offsets.
	r.b = secs[secElement]
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		if r.u() != 0 || r.byte() != 0x41 {
			return nil, bad
		}
		off := r.s()
		if r.byte() != 0x0b {
			return nil, bad
		}
		for q, n := uint64(0), r.u(); q < n && r.ok(); q++ {
			m.table = append(m.table, [2]uint32{uint32(off) + uint32(q), uint32(r.u())})
		}
	}
	// Memory: count 1, flags, min [, max].
	r.b = secs[secMemory]
	if r.u() != 1 || r.byte()&^1 != 0 {
		return nil, bad
	}
	m.memMin = uint32(r.u())
	if r.err || len(m.bodies) != len(m.sig) {
		return nil, bad
	}
	m.exports, err = readExports(secs[secExport])
	return m, err
}

// readExports reads an export section: the exported functions (kind 0)
// by name.
func readExports(b []byte) (map[string]uint32, error) {
	out := map[string]uint32{}
	r := &reader{b: b}
	for k, cnt := uint64(0), r.u(); k < cnt && r.ok(); k++ {
		name := string(r.bytes(int(r.u())))
		kind := r.byte()
		if idx := uint32(r.u()); kind == 0 {
			out[name] = idx
		}
	}
	if r.err {
		return nil, errors.New("unexpected wasm export section")
	}
	return out, nil
}

// reader reads LEB128 numbers and bytes, remembering any overrun.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) ok() bool { return !r.err }

func (r *reader) u() uint64 {
	v, n := uleb(r.b)
	if n == 0 {
		r.err, r.b = true, nil
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) s() int64 {
	v, n := sleb(r.b)
	if n == 0 {
		r.err, r.b = true, nil
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.err, r.b = true, nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func uleb(b []byte) (uint64, int) {
	var r uint64
	var s uint
	for i, x := range b {
		if i >= 10 {
			return 0, 0
		}
		r |= uint64(x&0x7f) << s
		s += 7
		if x < 0x80 {
			return r, i + 1
		}
	}
	return 0, 0
}

func sleb(b []byte) (int64, int) {
	var r int64
	var s uint
	for i, x := range b {
		if i >= 10 {
			return 0, 0
		}
		r |= int64(x&0x7f) << s
		s += 7
		if x < 0x80 {
			if x&0x40 != 0 && s < 64 {
				r |= -1 << s
			}
			return r, i + 1
		}
	}
	return 0, 0
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
