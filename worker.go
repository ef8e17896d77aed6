package kairos

import "context"

// WorkerPool is what runs turns on a bounded number of workers (the
// bot's KAIROS_WORKERS). Yield gives the calling turn's worker to the
// pool; resume takes one back, before any chat waiting for a first
// worker, and returns once the turn may go on.
type WorkerPool interface {
	Yield() (resume func())
}

type workerKey struct{}

// WithWorker marks ctx as a turn running on one of pool's workers.
func WithWorker(ctx context.Context, pool WorkerPool) context.Context {
	return context.WithValue(ctx, workerKey{}, pool)
}

// Blocked runs wait, which blocks with no work of its own to do (the
// sandbox engine another turn is compiling), and lends the turn's worker
// to other chats meanwhile when ctx is a turn on a worker (WithWorker).
// Eight turns waiting for the engine's first compilation held all eight
// workers, and every other chat's answer waited with them.
func Blocked(ctx context.Context, wait func()) {
	pool, ok := ctx.Value(workerKey{}).(WorkerPool)
	if !ok {
		wait()
		return
	}
	resume := pool.Yield()
	defer resume()
	wait()
}
