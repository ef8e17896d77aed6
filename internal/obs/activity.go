package obs

import (
	"slices"
	"sync"
	"time"
)

// Activity keeps the last hour per minute for the console's overview:
// turns, errors and model latencies. It is in memory and per process (the
// metrics endpoint is the durable view).
type Activity struct {
	mu      sync.Mutex
	now     func() time.Time
	minutes [60]minute
}

type minute struct {
	at        int64 // unix minute this slot holds
	turns     int
	errors    int
	latencies []float64 // model call milliseconds
}

// NewActivity returns an empty recorder.
func NewActivity(now func() time.Time) *Activity {
	if now == nil {
		now = time.Now
	}
	return &Activity{now: now}
}

// slot returns the current minute's slot, emptied when it held an old one.
func (a *Activity) slot() *minute {
	m := a.now().Unix() / 60
	s := &a.minutes[m%60]
	if s.at != m {
		*s = minute{at: m}
	}
	return s
}

// Turn counts a finished turn.
func (a *Activity) Turn() {
	a.mu.Lock()
	a.slot().turns++
	a.mu.Unlock()
}

// Model records a model call's latency, and an error when it failed.
func (a *Activity) Model(d time.Duration, failed bool) {
	a.mu.Lock()
	s := a.slot()
	if failed {
		s.errors++
	} else if len(s.latencies) < 1000 {
		s.latencies = append(s.latencies, float64(d.Microseconds())/1000)
	}
	a.mu.Unlock()
}

// LastHour returns turns and median model latency (ms) per minute, oldest
// first, and the errors of the hour.
func (a *Activity) LastHour() (turns []int, latency []float64, errors int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now().Unix() / 60
	turns, latency = make([]int, 60), make([]float64, 60)
	for i := range 60 {
		m := now - 59 + int64(i)
		s := &a.minutes[((m%60)+60)%60]
		if s.at != m {
			continue
		}
		turns[i], errors = s.turns, errors+s.errors
		if n := len(s.latencies); n > 0 {
			l := slices.Clone(s.latencies)
			slices.Sort(l)
			latency[i] = l[n/2]
		}
	}
	return turns, latency, errors
}
