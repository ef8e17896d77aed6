package testkit

import (
	"fmt"
	"sync"
	"testing"
)

// Hammer runs fn in workers goroutines released together (so they really
// contend), waits for all of them and fails tb with every error they
// returned, each with its worker's number. Tests of "exactly one wins"
// and of concurrent writers use it.
func Hammer(tb testing.TB, workers int, fn func(worker int) error) {
	tb.Helper()
	start := make(chan struct{})
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := fn(w); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Error(err)
	}
}
