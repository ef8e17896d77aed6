package sandbox

import (
	"context"
	"fmt"

	"github.com/kairos-agent/kairos"
	"github.com/tetratelabs/wazero/experimental"
)

// Each instance's linear memory is backed by a cappedMemory: a growth past
// the memory limit of the cell it serves fails at once (memory.grow gives
// -1, QuickJS's malloc gets NULL and throws) and stops the cell with
// category memory. Checking only at the interrupt poll was not enough: a
// loop of large allocations (1 MiB strings) does little bytecode between
// polls, so it ran up to the engine's page cap and spent many seconds
// collecting garbage there before a poll saw the deadline.

// withCappedMemory returns ctx with an allocator whose memories consult
// io's cell for their limit.
func withCappedMemory(ctx context.Context, io *instanceIO) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		return &cappedMemory{buf: make([]byte, 0, capacity), max: max, io: io}
	}))
}

type cappedMemory struct {
	buf []byte
	max uint64
	io  *instanceIO
}

// Reallocate implements experimental.LinearMemory.
func (m *cappedMemory) Reallocate(size uint64) []byte {
	if c := m.io.current(); c != nil && size > uint64(c.budget.MemoryLimit) {
		c.stop(kairos.CatMemory, fmt.Sprintf("memory limit of %d MiB reached", c.budget.MemoryLimit>>20))
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	grown := min(max(size, size+size/4), max(m.max, size)) // amortised, never past the engine's cap
	nb := make([]byte, size, grown)
	copy(nb, m.buf)
	m.buf = nb
	return nb
}

// Free implements experimental.LinearMemory.
func (m *cappedMemory) Free() { m.buf = nil }

// current is the cell the instance serves, nil before it is attached.
func (o *instanceIO) current() *cell {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cell
}
