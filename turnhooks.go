package kairos

import (
	"context"
	"sync"
)

// TurnHooks holds work that must wait until the current turn is saved: a
// tool that ends the session (the memory tool's __NEW_SESSION__) defers
// the end with AfterTurn, so the turn's own messages are stored in the
// session they belong to, and its summary includes them.
type TurnHooks struct {
	mu    sync.Mutex
	funcs []func(context.Context) error
}

type turnHooksKey struct{}

// WithTurnHooks returns ctx carrying a fresh TurnHooks for one turn.
func WithTurnHooks(ctx context.Context) (context.Context, *TurnHooks) {
	h := &TurnHooks{}
	return context.WithValue(ctx, turnHooksKey{}, h), h
}

// AfterTurn runs f once the turn of ctx is saved; outside a turn it runs
// f at once.
func AfterTurn(ctx context.Context, f func(context.Context) error) error {
	h, _ := ctx.Value(turnHooksKey{}).(*TurnHooks)
	if h == nil {
		return f(ctx)
	}
	h.mu.Lock()
	h.funcs = append(h.funcs, f)
	h.mu.Unlock()
	return nil
}

// Run runs the deferred work in order and returns the errors joined.
func (h *TurnHooks) Run(ctx context.Context) []error {
	h.mu.Lock()
	funcs := h.funcs
	h.funcs = nil
	h.mu.Unlock()
	var errs []error
	for _, f := range funcs {
		if err := f(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
