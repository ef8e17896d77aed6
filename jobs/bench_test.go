package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/jobs"
)

// BenchmarkRolloverNoBoundary is the per-turn cost of the lazy rollover
// when no boundary passed (the usual case): no database query.
func BenchmarkRolloverNoBoundary(b *testing.B) {
	e := newEnv(b)
	u := e.user(1, "Asia/Tokyo")
	sess := e.say(u, time.Date(2026, 3, 4, 9, 0, 0, 0, u.loc), "hi")
	in := inbound(u, time.Date(2026, 3, 4, 18, 0, 0, 0, u.loc))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.sched.Sessions().Rollover(ctx, in, sess); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleBackupPath() {
	fmt.Println(jobs.BackupPath("/var/lib/kairos/backups", time.Date(2026, 3, 8, 3, 30, 0, 0, time.UTC)))
	// Output: /var/lib/kairos/backups/kairos-20260308T033000Z.db
}
