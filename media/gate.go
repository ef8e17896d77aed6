package media

import (
	"context"
	"sync"
)

// gate bounds how many files are downloaded and decoded at once. Its
// limit is read at every entry, so a policy reload applies to the next
// file; files already inside finish.
type gate struct {
	mu      sync.Mutex
	active  int
	waiting int
	free    chan struct{} // closed and replaced when a file leaves
}

func newGate() *gate { return &gate{free: make(chan struct{})} }

// enter waits until fewer than limit files are inside, or ctx ends.
func (g *gate) enter(ctx context.Context, limit int) error {
	limit = max(limit, 1)
	g.mu.Lock()
	g.waiting++
	for g.active >= limit {
		free := g.free
		g.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			g.mu.Lock()
			g.waiting--
			g.mu.Unlock()
			return ctx.Err()
		}
		g.mu.Lock()
	}
	g.waiting--
	g.active++
	g.mu.Unlock()
	return nil
}

func (g *gate) leave() {
	g.mu.Lock()
	g.active--
	close(g.free)
	g.free = make(chan struct{})
	g.mu.Unlock()
}

// Decoding reports how many files are being downloaded or decoded now and
// how many wait their turn (media.max_parallel_files).
func (h *Handler) Decoding() (active, waiting int) {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return h.gate.active, h.gate.waiting
}
