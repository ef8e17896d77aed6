package kairos_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestAfterTurn(t *testing.T) {
	var order []string
	// Outside a turn: at once.
	if err := kairos.AfterTurn(context.Background(), func(context.Context) error { order = append(order, "now"); return nil }); err != nil || len(order) != 1 {
		t.Fatalf("outside a turn: %v, %v", order, err)
	}
	ctx, hooks := kairos.WithTurnHooks(context.Background())
	kairos.AfterTurn(ctx, func(context.Context) error { order = append(order, "a"); return nil })
	kairos.AfterTurn(ctx, func(context.Context) error { order = append(order, "b"); return errors.New("b failed") })
	if len(order) != 1 {
		t.Fatalf("deferred work ran early: %v", order)
	}
	errs := hooks.Run(ctx)
	if len(errs) != 1 || len(order) != 3 || order[1] != "a" || order[2] != "b" {
		t.Fatalf("run: %v, %v", order, errs)
	}
	if errs := hooks.Run(ctx); len(errs) != 0 || len(order) != 3 {
		t.Fatal("deferred work ran twice")
	}
}
