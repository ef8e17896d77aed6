package code

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/tools/cell"
	"github.com/kairos-agent/kairos/tools/toolutil"
)

// run is one cell to run.
type run struct {
	code      string
	timeoutMS toolutil.Int
	resume    *kairos.Checkpoint
	reasoning string
}

// job is one run, in memory.
type job struct {
	id      string
	userKey string
	started time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	trace   *kairos.CodeExecution // as started; finish copies it

	mu    sync.Mutex // orders the running and the final trace records
	async bool
	out   *outcome // set before done is closed
}

// outcome is a finished run.
type outcome struct {
	res  *kairos.CellResult // scrubbed
	note string
}

// execute runs code and answers with its result, or with a job_id when it
// is still running after AsyncAfter.
func (t *Tool) execute(ctx context.Context, inv *kairos.ToolInvocation, r run) (*response, error) {
	task, trace, note := t.prepare(inv, r)
	j := &job{id: trace.ID, userKey: inv.UserKey, started: trace.CreatedAt, done: make(chan struct{})}
	if err := t.start(j, task, trace, note); err != nil {
		return nil, err
	}

	timer := time.NewTimer(t.asyncAfter)
	defer timer.Stop()
	// The cell runs under the sandbox's own bound; the turn waits with
	// nothing to do, so its worker serves other chats meanwhile (the first
	// cells of a busy bot wait for the engine's compilation).
	kairos.Blocked(ctx, func() {
		select {
		case <-j.done:
		case <-ctx.Done():
		case <-timer.C:
		}
	})
	select {
	case <-j.done:
		return t.respond(j.id, j.out), nil
	default:
	}
	if err := ctx.Err(); err != nil {
		j.cancel()
		return nil, err
	}
	j.mu.Lock()
	if j.out != nil {
		j.mu.Unlock()
		return t.respond(j.id, j.out), nil
	}
	j.async = true
	// The running row is written under j.mu, so the final row (also
	// written under j.mu) always comes after it.
	t.record(trace)
	j.mu.Unlock()
	t.log.Info("code run continues in the background", "job_id", j.id, "verb", task.Verb)
	return &response{Success: true, Status: StatusRunning, JobID: j.id, Note: note}, nil
}

// prepare builds the cell task for a run under the current policy, the
// trace that records it, and the note on a capped timeout_ms.
func (t *Tool) prepare(inv *kairos.ToolInvocation, r run) (*kairos.CellTask, *kairos.CodeExecution, string) {
	pol := t.pol()
	c := t.classify(pol, r.code)
	b := cell.BudgetFor(pol, c.verb)
	note := ""
	if r.timeoutMS.Set {
		want := time.Duration(r.timeoutMS.Value) * time.Millisecond
		if want > b.TimeBudget {
			note = fmt.Sprintf("timeout_ms capped at the policy's %d ms", b.TimeBudget.Milliseconds())
		} else {
			b.TimeBudget = want
		}
	}
	task := &kairos.CellTask{
		Code: r.code, Verb: c.verb, Budget: b, Network: c.grant, Secrets: c.secrets, Now: t.now(), Files: inv.Files,
		Credentials: pol.Features.CredentialsAccess,
	}
	if strings.HasPrefix(inv.ApprovedBy, kairos.GrantedBy) {
		// A standing grant covered this run: it reaches what the grant
		// named, and nothing the code might compute besides.
		tg, _ := cell.NetworkTargets(r.code)
		task.Network, task.Secrets = cell.Restrict(c.grant, tg), nil
	}
	if r.resume != nil {
		task.Resume = r.resume
		task.ContinuationID = r.resume.ContinuationID
	}
	trace := &kairos.CodeExecution{
		ID: kairos.NewID(), Code: t.red.Scrub(r.code), SessionID: inv.SessionID, UserKey: inv.UserKey,
		TriggerMessage: t.red.Scrub(kairos.Clip(inv.TriggerMessage, 4000)), LLMReasoning: t.red.Scrub(kairos.Clip(r.reasoning, 8000)),
		Verb: c.verb, RiskTier: b.RiskTier, CreatedAt: t.now(),
	}
	return task, trace, note
}

// start registers the job and runs its task in the background, under a
// context that Close cancels and that ends a grace period after the
// task's time budget.
func (t *Tool) start(j *job, task *kairos.CellTask, trace *kairos.CodeExecution, note string) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return kairos.Errorf(kairos.EUNAVAILABLE, "code execution is not available")
	}
	var jctx context.Context
	j.trace = trace
	jctx, j.cancel = context.WithTimeout(t.bg, task.Budget.TimeBudget+jobGrace)
	t.jobs[j.id] = j
	t.wg.Add(1)
	t.mu.Unlock()

	go func() {
		defer t.wg.Done()
		defer j.cancel()
		res, err := t.runner.Run(jctx, task)
		t.finish(j, res, err, note)
	}()
	return nil
}

// finish scrubs and records a finished run and wakes its waiters; it
// reports false when the run had been settled already (by Close).
func (t *Tool) finish(j *job, res *kairos.CellResult, err error, note string) bool {
	tr := *j.trace // the running record may be reading j.trace
	trace := &tr
	if err == nil && res == nil {
		err = fmt.Errorf("the runner returned no result")
	}
	if err != nil {
		msg := kairos.ErrorMessage(err)
		if kairos.ErrorCode(err) == kairos.EINTERNAL {
			msg = "the sandbox failed: " + t.red.Scrub(err.Error())
		}
		res = &kairos.CellResult{ErrorCategory: kairos.CatRuntime, Error: msg, Stderr: msg, ExitCode: -1}
		t.log.Error("code runner failed", "job_id", j.id, "err", t.red.Scrub(err.Error()))
	}
	res = t.scrub(res)
	if !res.Success && res.ErrorCategory == "" {
		res.ErrorCategory = kairos.CatRuntime
	}
	if res.Duration <= 0 {
		res.Duration = t.now().Sub(j.started)
	}
	trace.Stdout = kairos.Clip(res.Stdout, maxStoredBytes)
	trace.Stderr = clipTail(res.Stderr, maxStoredBytes)
	trace.ExitCode = res.ExitCode
	trace.DurationMS = res.Duration.Milliseconds()
	trace.Success = res.Success
	trace.ErrorCategory = res.ErrorCategory
	if !res.Success && trace.Stderr == "" {
		trace.Stderr = res.Error
	}
	switch {
	case res.Checkpoint != nil:
		b, _ := json.Marshal(stored{Checkpoint: res.Checkpoint, Output: res.Output})
		trace.Result = string(b)
	case len(res.Output) > 0:
		trace.Result = string(res.Output)
	}

	j.mu.Lock()
	if j.out != nil { // Close gave up on the run and recorded it already
		j.mu.Unlock()
		t.log.Info("code run ended after it was recorded as stopped", "job_id", j.id, "success", res.Success)
		return false
	}
	t.record(trace)
	j.out = &outcome{res: res, note: note}
	close(j.done)
	j.mu.Unlock()

	t.mu.Lock()
	t.finished = append(t.finished, j.id)
	for len(t.finished) > maxJobs {
		delete(t.jobs, t.finished[0])
		t.finished = t.finished[1:]
	}
	t.mu.Unlock()
	t.log.Info("code run finished", "job_id", j.id, "verb", trace.Verb, "success", res.Success,
		"category", res.ErrorCategory, "duration_ms", trace.DurationMS, "checkpoint", res.Checkpoint != nil)
	return true
}

// abandonRunning records every run still going as stopped (Close waited
// for it long enough) and returns how many there were.
func (t *Tool) abandonRunning() int {
	t.mu.Lock()
	var running []*job
	for _, j := range t.jobs {
		select {
		case <-j.done:
		default:
			running = append(running, j)
		}
	}
	t.mu.Unlock()
	n := 0
	for _, j := range running {
		msg := "the run did not stop when the code tool closed"
		if t.finish(j, &kairos.CellResult{ErrorCategory: kairos.CatTimeout, Error: msg, Stderr: msg, ExitCode: -1}, nil, "") {
			n++
			t.log.Error(msg, "job_id", j.id)
		}
	}
	return n
}

func (t *Tool) record(e *kairos.CodeExecution) {
	if t.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	cp := *e
	if err := t.store.RecordExecution(ctx, &cp); err != nil {
		t.log.Warn("recording a code execution failed", "job_id", e.ID, "err", err.Error())
	}
}

// status reports a job from memory, or from the trace store.
func (t *Tool) status(ctx context.Context, userKey, id string) (*response, error) {
	t.mu.Lock()
	j := t.jobs[id]
	t.mu.Unlock()
	if j != nil && j.userKey == userKey {
		select {
		case <-j.done:
			r := t.respond(j.id, j.out)
			r.Status = StatusDone
			return r, nil
		default:
			el := t.now().Sub(j.started).Milliseconds()
			return &response{Success: true, Status: StatusRunning, JobID: id, DurationMS: &el}, nil
		}
	}
	e, err := t.find(ctx, userKey, id)
	if err != nil {
		return nil, err
	}
	if !e.Success && e.ErrorCategory == "" {
		// Recorded as running, but not running here: the process that
		// ran it stopped before it finished.
		return &response{Success: false, Status: StatusDone, JobID: id, ErrorCategory: kairos.CatRuntime,
			Error: "the run was interrupted (the service restarted) and has no result; run it again"}, nil
	}
	r := t.respond(id, &outcome{res: fromTrace(e)})
	r.Status = StatusDone
	return r, nil
}

// find returns the trace of one of the user's runs.
func (t *Tool) find(ctx context.Context, userKey, id string) (*kairos.CodeExecution, error) {
	if t.store == nil {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no job %s", kairos.Clip(id, 64))
	}
	e, err := t.store.FindExecution(ctx, id)
	if kairos.ErrorCode(err) == kairos.ENOTFOUND || (err == nil && e.UserKey != userKey) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no job %s", kairos.Clip(id, 64))
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// checkpointOf returns the checkpoint of one of the user's runs, for a
// resume.
func (t *Tool) checkpointOf(ctx context.Context, userKey, id string) (*kairos.Checkpoint, error) {
	t.mu.Lock()
	j := t.jobs[id]
	t.mu.Unlock()
	if j != nil && j.userKey == userKey {
		select {
		case <-j.done:
			if cp := j.out.res.Checkpoint; cp != nil {
				return cp, nil
			}
			return nil, kairos.Errorf(kairos.EINVALID, "job %s has no checkpoint to resume", id)
		default:
			return nil, kairos.Errorf(kairos.ECONFLICT, "job %s is still running", id)
		}
	}
	e, err := t.find(ctx, userKey, id)
	if err != nil {
		return nil, err
	}
	if cp, _, ok := parseStored(e.Result); ok {
		return cp, nil
	}
	return nil, kairos.Errorf(kairos.EINVALID, "job %s has no checkpoint to resume", kairos.Clip(id, 64))
}
