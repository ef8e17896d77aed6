package main

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
)

// gatedCells runs cells on the shared sandbox; once held, the next cell
// waits (as for the engine's first compilation) until ready is closed. It
// lends nothing itself: what lends the worker is the product's.
type gatedCells struct {
	real    kairos.CodeRunner
	hold    atomic.Bool
	entered chan struct{}
	ready   chan struct{}
	open    sync.Once
}

// release lets the held cell run (at the test's end too, so a failed test
// does not leave the bot's shutdown waiting for it).
func (g *gatedCells) release() { g.open.Do(func() { close(g.ready) }) }

func (g *gatedCells) Run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	if g.hold.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.ready
	}
	return g.real.Run(ctx, task)
}

// TestCellWaitLendsTheWorker: with one worker, a turn whose cell waits
// (for the sandbox engine's first compilation, or a busy sandbox) lends
// the worker through the whole wiring (bot, desk, agent, the tool, the
// runner), whichever tool runs the cell: code (its turn waits for a
// background job) and a skill (its turn runs the cell itself). Another
// chat is answered while the cell waits; the cell's turn answers with its
// result after. Before, the waiting cell held the only worker: the other
// chat waited for the code tool's 20 s, or for the skill's cell.
func TestCellWaitLendsTheWorker(t *testing.T) {
	parallel(t)
	for _, door := range []struct{ name, ask, want string }{
		{"code", "compute the sum of 1..10 with code", "55"},
		{"skill", "double 2", `"doubled":4`},
	} {
		t.Run(door.name, func(t *testing.T) {
			cells, err := testCells()
			if err != nil {
				t.Fatal(err)
			}
			g := &gatedCells{real: cells, entered: make(chan struct{}, 1), ready: make(chan struct{})}
			e := skillEnv(t, "")
			e.vars["KAIROS_WORKERS"] = "1"
			skills := skillModel(createCall("double", skillCode, `{"doubled":4}`), "")
			e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
				last := r.Messages[len(r.Messages)-1]
				switch {
				case last.Role == "tool" && strings.Contains(last.Content, `"status":"running"`):
					return testkit.TextReply("It is still running.")
				case strings.Contains(last.Content, "with code"):
					return testkit.ToolReply(testkit.ToolCall{Name: "code", Arguments: `{"action":"execute","code":"let s = 0; for (let i = 1; i <= 10; i++) s += i; output({sum: s});"}`})
				case last.Content == "hello":
					return testkit.TextReply("hello back")
				}
				return skills(r)
			})
			e.startWithRunner(g)
			t.Cleanup(g.release) // runs before the bot's stop
			if door.name == "skill" {
				makeDouble(t, e)
			}
			sent := len(e.tg.SentTo(2002))
			g.hold.Store(true)
			e.tg.PushText(2002, 2002, door.ask, time.Now())
			select {
			case <-g.entered:
			case <-testCtx(t).Done():
				t.Fatalf("the cell never ran:\n%s", e.logs.String())
			}
			e.tg.PushText(operatorID, operatorID, "hello", time.Now())
			waitReply(t, e.tg, operatorID, 1, "hello back")
			if n := len(e.tg.SentTo(2002)); n != sent {
				t.Fatalf("the other chat was answered only after the cell's turn went on: %q", e.tg.SentTo(2002)[n-1].LastText())
			}
			g.release()
			waitReply(t, e.tg, 2002, sent+1, door.want)
		})
	}
}
