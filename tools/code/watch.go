package code

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/cell"
)

// CellWrites classifies code run outside a turn (a watching cell) as
// execute classifies it: whether it may send anything but GET/HEAD under
// the policy p (then it needs the code.network_write approval), and the
// reason the approval states.
func CellWrites(p *kairos.Policy, code string) (bool, string) {
	g := cell.GrantFor(p)
	if !cell.WritesAllowed(g) || !cell.Scan(code).NetworkWrite {
		return false, ""
	}
	return true, "the code " + writeReason(g)
}

// writeReason is the approval's reason for code that may write to the
// network under g: the methods beyond GET/HEAD it may use.
func writeReason(g kairos.NetworkGrant) string {
	var ms []string
	for _, m := range g.Methods {
		if m != "GET" && m != "HEAD" {
			ms = append(ms, m)
		}
	}
	return "may send data to the network (" + strings.Join(ms, "/") + " requests)"
}

// CellGrant is the network grant of a watching cell: the policy's whole
// grant when its write was approved, GET/HEAD only otherwise.
func CellGrant(p *kairos.Policy, writeApproved bool) kairos.NetworkGrant {
	g := cell.GrantFor(p)
	if writeApproved {
		return g
	}
	return cell.ReadOnly(g)
}

// Watcher runs watching cells (a schedule's code) at their firings.
type Watcher struct {
	Runner kairos.CodeRunner
	Store  kairos.CodeExecutionStore
	Policy func() *kairos.Policy
	Now    func() time.Time
	Logger *slog.Logger
}

// Run runs s's cell under the MONITOR budgets, records it like every
// cell, and returns its notification (output({notify}), if any). With
// features.cli_exec false it does not run (and is not retried): seed 004.
// A cell may send only GET/HEAD unless its create was approved as
// code.network_write; one from a tainted turn never writes.
func (w *Watcher) Run(ctx context.Context, s *kairos.Schedule, f *kairos.Firing) (string, error) {
	p := w.Policy()
	if !p.Features.CLIExec {
		w.Logger.Info("watching cell not run: features.cli_exec is false", "schedule", s.ID)
		return "", nil
	}
	task := &kairos.CellTask{Code: s.Code, Verb: kairos.VerbMonitor, Budget: cell.BudgetFor(p, kairos.VerbMonitor),
		Network: CellGrant(p, s.NetWrite && !s.Tainted), Now: w.Now()}
	res, err := w.Runner.Run(ctx, task)
	if err != nil {
		return "", err
	}
	rec := &kairos.CodeExecution{ID: res.ID, Code: s.Code, Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode,
		DurationMS: res.Duration.Milliseconds(), Success: res.Success, UserKey: kairos.UserKey(kairos.ChannelTelegram, s.UserID),
		TriggerMessage: fmt.Sprintf("schedule %d (firing %d)", s.ID, f.ID), ErrorCategory: res.ErrorCategory, Verb: kairos.VerbMonitor,
		Result: string(res.Output), CreatedAt: w.Now()}
	if err := w.Store.RecordExecution(ctx, rec); err != nil {
		w.Logger.Warn("record watching cell", "err", err)
	}
	var out struct {
		Notify string `json:"notify"`
	}
	if len(res.Output) > 0 && json.Unmarshal(res.Output, &out) == nil {
		return strings.TrimSpace(out.Notify), nil
	}
	return "", nil
}
