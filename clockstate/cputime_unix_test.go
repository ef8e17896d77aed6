//go:build unix

package clockstate

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used (user + system):
// a benchmark's cost that does not grow when the machine is busy.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
