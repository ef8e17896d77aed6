//go:build unix

package clockstate

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on path, an existing
// file or folder (nothing is created).
func lockFile(path string) (func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
