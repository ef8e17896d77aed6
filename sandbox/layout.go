package sandbox

import (
	"context"
	"errors"
)

// The C stack layout of the QuickJS module: the load-time patch that gives
// the stack its own region, and the canary that tells when a cell ran
// past it anyway.

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
	secs, err := sections(mod)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), mod[:8]...)
	var oldMin uint32
	patchedMem, patchedGlobal := false, false
	for _, sec := range secs {
		body := sec.body
		switch sec.id {
		case secMemory: // count, flags, min [, max]
			cnt, a := uleb(body)
			if cnt != 1 || a >= len(body) || body[a] != 0 {
				return nil, errors.New("unexpected memory section")
			}
			min, b := uleb(body[a+1:])
			if b == 0 {
				return nil, errors.New("unexpected memory section")
			}
			oldMin = uint32(min)
			nb := appendULEB([]byte{1, 0}, uint64(oldMin+stackPages))
			nb = append(nb, body[a+1+b:]...)
			body = nb
			patchedMem = true
		case secGlobal: // the first global is __stack_pointer (i32 mut, i32.const)
			cnt, a := uleb(body)
			if cnt < 1 || a+3 >= len(body) || body[a] != 0x7f || body[a+1] != 1 || body[a+2] != 0x41 {
				return nil, errors.New("unexpected global section")
			}
			_, b := sleb(body[a+3:])
			if b == 0 || a+3+b >= len(body) || body[a+3+b] != 0x0b {
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
		out = append(out, sec.id)
		out = appendULEB(out, uint64(len(body)))
		out = append(out, body...)
	}
	if !patchedMem || !patchedGlobal {
		return nil, errors.New("memory or global section missing")
	}
	return out, nil
}

// canaryLen bytes just below the stack region hold a pattern; a stack
// overflow overwrites them (see overflowed).
const canaryLen = 256

// guard fills the heap below the stack region with blocks that are never
// freed, so nothing of QuickJS lives where a stack overflow lands first,
// and writes the canary below the stack.
func (e *engine) guard(ctx context.Context, in *instance) error {
	for _, size := range []uint64{4096, 512, 64, 8} {
		for i := 0; ; i++ {
			if i > 256 {
				return errors.New("heap layout: guard blocks never reached the stack")
			}
			p, err := in.call(ctx, "malloc", size)
			if err != nil {
				return err
			}
			if uint32(p) >= e.stackTop {
				if err := in.free(ctx, uint32(p)); err != nil {
					return err
				}
				break
			}
		}
	}
	return in.writeCanary(e.stackLow)
}

func (in *instance) writeCanary(stackLow uint32) error {
	b, ok := in.mem.Read(stackLow-canaryLen, canaryLen)
	if !ok {
		return errors.New("canary out of range")
	}
	for i := range b {
		b[i] = byte(0xA5 ^ i)
	}
	return nil
}

// overflowed reports whether the C stack ran past its region.
func (e *engine) overflowed(in *instance) bool {
	b, ok := in.mem.Read(e.stackLow-canaryLen, canaryLen)
	if !ok {
		return true
	}
	for i := range b {
		if b[i] != byte(0xA5^i) {
			return true
		}
	}
	return false
}
