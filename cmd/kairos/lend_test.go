package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// waitingCells is a sandbox whose engine is not ready yet: each cell
// waits in kairos.Blocked (as the lazy runner waits for the engine's
// first compilation) until ready is closed.
type waitingCells struct {
	entered chan struct{}
	ready   chan struct{}
}

func (w waitingCells) Run(ctx context.Context, _ *kairos.CellTask) (*kairos.CellResult, error) {
	kairos.Blocked(ctx, func() {
		w.entered <- struct{}{}
		<-w.ready
	})
	return &kairos.CellResult{Success: true, Output: json.RawMessage(`{"sum":55}`), Duration: time.Millisecond}, nil
}

// TestCellWaitingForTheEngineLendsTheWorker: with one worker, a turn
// whose cell waits for the sandbox engine lends the worker through the
// whole wiring (bot, desk, agent, code tool, runner), so another chat is
// answered before the engine is ready; the cell's turn answers with the
// cell's result after. Before, the waiting cell held the only worker for
// the code tool's 20 s, and the other chat's answer waited that long.
func TestCellWaitingForTheEngineLendsTheWorker(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_WORKERS"] = "1"
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		switch {
		case len(r.ToolResults()) > 0 && strings.Contains(r.ToolResults()[0].Content, "55"):
			return testkit.TextReply("The sum is 55.")
		case len(r.ToolResults()) > 0:
			return testkit.TextReply("It is still running.")
		case strings.Contains(r.LastUserMessage(), "sum"):
			return testkit.ToolReply(testkit.ToolCall{Name: "code", Arguments: `{"action":"execute","code":"output({sum: 55});"}`})
		default:
			return testkit.TextReply("hello back")
		}
	})
	cells := waitingCells{entered: make(chan struct{}, 1), ready: make(chan struct{})}
	e.startWithRunner(cells)
	e.tg.PushText(2002, 2002, "compute the sum of 1..10 with code", time.Now())
	select {
	case <-cells.entered:
	case <-testCtx(t).Done():
		t.Fatalf("the cell never ran:\n%s", e.logs.String())
	}
	e.tg.PushText(operatorID, operatorID, "hello", time.Now())
	waitReply(t, e.tg, operatorID, 1, "hello back")
	for _, r := range e.llm.Requests() {
		if len(r.ToolResults()) > 0 { // the code call gave up waiting (20 s) and freed the worker that way
			t.Fatalf("the other chat was answered only after the cell's turn went on: %q", r.ToolResults()[0].Content)
		}
	}
	close(cells.ready)
	waitReply(t, e.tg, 2002, 1, "55")
}
