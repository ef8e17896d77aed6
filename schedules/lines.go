package schedules

import (
	"context"
	"strconv"
	"time"

	"github.com/kairos-agent/kairos"
)

// job is a leased firing waiting in its chat's line or being delivered.
type job struct {
	f      *kairos.Firing
	leased time.Time // when this process leased it
	stop   func()    // ends the renewal of its lease
	notice bool      // a reminder: a send, delivered in the notices' slots
}

// line is one chat's firings in the order they were leased (due time,
// then id); one goroutine (drain) delivers them one after another.
type line struct{ jobs []*job }

// lineOf is the line a schedule's firings wait in: its chat, or its
// thread when it has no chat id.
func lineOf(s *kairos.Schedule) string {
	if s.ChatID != 0 {
		return "chat:" + strconv.FormatInt(s.ChatID, 10)
	}
	return "thread:" + s.ThreadKey
}

// dispatch leases pending firings, as many as keep the runner's held
// firings within Batch, and queues each on its chat's line. It returns
// how many it leased and how many it asked for.
func (r *Runner) dispatch(ctx context.Context) (leased, limit int, err error) {
	r.mu.Lock()
	limit = r.cfg.Batch - len(r.held)
	r.mu.Unlock()
	if limit <= 0 {
		return 0, limit, nil
	}
	now := r.cfg.Now()
	fs, err := r.cfg.Store.LeaseFirings(ctx, now, r.cfg.Lease, limit)
	for _, f := range fs {
		r.queue(ctx, f, now)
	}
	return len(fs), limit, err
}

// queue puts a freshly leased firing on its chat's line, renewing its
// lease from now on: a firing waiting behind its chat's long task stays
// with this process rather than going to another replica.
func (r *Runner) queue(ctx context.Context, f *kairos.Firing, now time.Time) {
	r.mu.Lock()
	if r.held[f.ID] { // its renewal fell behind and it was leased again: it is queued here already
		r.mu.Unlock()
		return
	}
	r.held[f.ID] = true
	r.mu.Unlock()
	j := &job{f: f, leased: now, stop: r.keepLease(ctx, f.ID)}
	s, err := r.cfg.Store.Schedule(ctx, f.ScheduleID)
	if err != nil && ctx.Err() != nil {
		r.giveBack(j)
		return
	}
	if err != nil {
		r.cfg.Logger.Error("firing's schedule", "schedule", f.ScheduleID, "firing", f.ID, "err", err)
		r.release(j) // retried when its lease ends
		return
	}
	key := lineOf(s)
	j.notice = s.Kind == kairos.ScheduleReminder
	r.mu.Lock()
	ln := r.lines[key]
	start := ln == nil
	if start {
		ln = &line{}
		r.lines[key] = ln
		r.busy.Add(1)
	}
	ln.jobs = append(ln.jobs, j)
	r.mu.Unlock()
	if start {
		go r.drain(ctx, key, ln)
	}
}

// drain delivers a line's firings in order, each under one of the
// Workers slots of its kind (reminders' or the work's), until the line is
// empty. When ctx ends the rest are let
// go; their leases run out and the next start delivers them.
func (r *Runner) drain(ctx context.Context, key string, ln *line) {
	defer r.busy.Done()
	for {
		r.mu.Lock()
		if len(ln.jobs) == 0 {
			delete(r.lines, key)
			r.mu.Unlock()
			return
		}
		j := ln.jobs[0]
		ln.jobs[0] = nil
		ln.jobs = ln.jobs[1:]
		r.mu.Unlock()
		if ctx.Err() != nil {
			r.giveBack(j)
			continue
		}
		slots := r.work
		if j.notice {
			slots = r.notices
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			r.giveBack(j)
			continue
		}
		if r.deliver(ctx, j) {
			r.sent.Add(1)
		}
		<-slots
		r.release(j)
	}
}

// giveBack lets go of j, never tried because ctx ended (shutdown): its
// try is handed back and its lease ended, so the next start, or another
// replica at once, delivers it, and restarts never use up its tries.
func (r *Runner) giveBack(j *job) {
	r.release(j)
	lr, ok := r.cfg.Store.(LeaseRenewer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := lr.ReturnFiring(ctx, j.f.ID, j.f.Attempts, r.cfg.Now()); err != nil {
		r.cfg.Logger.Warn("hand back an untried firing", "firing", j.f.ID, "err", err)
	}
}

// release stops renewing j's lease and forgets it: finished, or left for
// a later tick once its lease runs out.
func (r *Runner) release(j *job) {
	j.stop()
	r.mu.Lock()
	delete(r.held, j.f.ID)
	r.mu.Unlock()
}
