package sandbox

import (
	"errors"
)

// patchLayout returns a copy of the QuickJS module with a larger C stack.
//
// The module is linked with wasm-ld's default layout: static data, then a
// 64 KiB shadow stack growing down towards it, then the heap. QuickJS-ng's
// own stack check is compiled out for WASI, so a JavaScript recursion a few
// hundred frames deep overruns the stack into static data. We give the
// module stackPages more pages of initial memory and start the stack
// pointer at their top, so the stack grows down through its own region
// (about 6000 JavaScript frames per MiB) before it can reach anything else;
// the heap begins above it (wasi-libc's sbrk grows from the initial memory
// size). Only the memory and global sections change.
func patchLayout(mod []byte, stackPages uint32) ([]byte, error) {
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	out := append([]byte(nil), mod[:8]...)
	i := 8
	var oldMin uint32
	patchedMem, patchedGlobal := false, false
	for i < len(mod) {
		id := mod[i]
		size, n := uleb(mod[i+1:])
		if n == 0 {
			return nil, errors.New("bad section header")
		}
		start := i + 1 + n
		end := start + int(size)
		if end > len(mod) {
			return nil, errors.New("truncated section")
		}
		body := mod[start:end]
		switch id {
		case 5: // memory: count, flags, min [, max]
			cnt, a := uleb(body)
			if cnt != 1 || body[a] != 0 {
				return nil, errors.New("unexpected memory section")
			}
			min, b := uleb(body[a+1:])
			oldMin = uint32(min)
			nb := appendULEB([]byte{1, 0}, uint64(oldMin+stackPages))
			nb = append(nb, body[a+1+b:]...)
			body = nb
			patchedMem = true
		case 6: // globals: the first is __stack_pointer (i32 mut, i32.const)
			cnt, a := uleb(body)
			if cnt < 1 || body[a] != 0x7f || body[a+1] != 1 || body[a+2] != 0x41 {
				return nil, errors.New("unexpected global section")
			}
			_, b := sleb(body[a+3:])
			if body[a+3+b] != 0x0b {
				return nil, errors.New("unexpected global init")
			}
			if !patchedMem {
				return nil, errors.New("memory section after globals")
			}
			top := int64(oldMin+stackPages) * wasmPage
			nb := appendULEB(nil, cnt)
			nb = append(nb, 0x7f, 1, 0x41)
			nb = appendSLEB(nb, top)
			nb = append(nb, body[a+3+b:]...)
			body = nb
			patchedGlobal = true
		}
		out = append(out, id)
		out = appendULEB(out, uint64(len(body)))
		out = append(out, body...)
		i = end
	}
	if !patchedMem || !patchedGlobal {
		return nil, errors.New("memory or global section missing")
	}
	return out, nil
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
