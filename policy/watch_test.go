package policy_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/policy"
)

type change struct {
	p   *kairos.Policy
	err error
}

// startWatcher starts a watcher with a short debounce whose onChange
// feeds a channel.
func startWatcher(t *testing.T, path string, opts ...policy.WatchOption) (*policy.Watcher, chan change) {
	t.Helper()
	ch := make(chan change, 16)
	opts = append([]policy.WatchOption{policy.WithDebounce(5 * time.Millisecond)}, opts...)
	w, err := policy.NewWatcher(path, nil, func(p *kairos.Policy, err error) { ch <- change{p, err} }, opts...)
	if err != nil {
		t.Fatalf("NewWatcher: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w, ch
}

func next(t *testing.T, ch chan change) change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-testkit.Deadline(t).Done():
		t.Fatal("no reload by the test's deadline")
		return change{}
	}
}

// writeAtomic saves like editors do: a temporary file renamed over the
// original.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp~"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestWatcherReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "clock:\n  mode: light\n")
	w, ch := startWatcher(t, path)
	if got := w.Current().Clock.Mode; got != "light" {
		t.Fatalf("initial mode %q", got)
	}
	if st := w.LastReload(); !st.OK || st.Defaults {
		t.Fatalf("initial status %+v", st)
	}

	t.Run("in-place write", func(t *testing.T) {
		write(t, path, "clock:\n  mode: normal\n")
		c := next(t, ch)
		if c.err != nil || c.p.Clock.Mode != "normal" || w.Current().Clock.Mode != "normal" {
			t.Fatalf("got %v / %v, current %q", c.err, c.p, w.Current().Clock.Mode)
		}
	})
	t.Run("rename over the file", func(t *testing.T) {
		writeAtomic(t, path, "clock:\n  mode: off\n")
		c := next(t, ch)
		if c.err != nil || w.Current().Clock.Mode != "off" {
			t.Fatalf("got %v, current %q", c.err, w.Current().Clock.Mode)
		}
	})
	t.Run("invalid edit keeps the last good policy", func(t *testing.T) {
		writeAtomic(t, path, "clock:\n  mode: loud\n")
		c := next(t, ch)
		want := path + `:2:9: clock.mode: "loud" is not one of off, light, normal`
		if c.err == nil || c.err.Error() != want {
			t.Fatalf("err = %v, want %s", c.err, want)
		}
		if c.p == nil || c.p.Clock.Mode != "off" || w.Current().Clock.Mode != "off" {
			t.Fatalf("policy in force changed: %v", w.Current().Clock.Mode)
		}
		if st := w.LastReload(); st.OK || st.Err != want {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("fixed file is taken", func(t *testing.T) {
		writeAtomic(t, path, "clock:\n  mode: light\n")
		c := next(t, ch)
		if c.err != nil || w.Current().Clock.Mode != "light" || !w.LastReload().OK {
			t.Fatalf("got %v, current %q", c.err, w.Current().Clock.Mode)
		}
	})
	t.Run("removed file keeps the last good policy", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		c := next(t, ch)
		if c.err == nil || !strings.Contains(c.err.Error(), "removed") || w.Current().Clock.Mode != "light" {
			t.Fatalf("got %v, current %q", c.err, w.Current().Clock.Mode)
		}
	})
}

// TestWatcherIgnoresUnchangedAndUnrelated: touching other files in the
// directory or rewriting the same bytes calls no onChange; the next real
// change is the next call.
func TestWatcherIgnoresUnchangedAndUnrelated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	write(t, path, "clock:\n  mode: light\n")
	w, ch := startWatcher(t, path)
	write(t, filepath.Join(dir, "other.txt"), "x")
	writeAtomic(t, path, "clock:\n  mode: light\n") // same bytes
	writeAtomic(t, path, "clock:\n  mode: normal\n")
	c := next(t, ch)
	if c.err != nil || c.p.Clock.Mode != "normal" {
		t.Fatalf("first change seen = %+v %v", c.p.Clock.Mode, c.err)
	}
	if w.Current().Clock.Mode != "normal" {
		t.Fatal("not in force")
	}
}

// TestWatcherKubernetesSymlinkSwap mimics a ConfigMap volume:
// policy.yaml → ..data/policy.yaml, ..data → ..v1, updated by swapping
// the ..data symlink atomically.
func TestWatcherKubernetesSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	mk := func(version, content string) {
		d := filepath.Join(dir, version)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, "policy.yaml"), content)
	}
	mk("..v1", "clock:\n  mode: light\n")
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "policy.yaml")
	if err := os.Symlink(filepath.Join("..data", "policy.yaml"), path); err != nil {
		t.Fatal(err)
	}
	w, ch := startWatcher(t, path)
	if w.Current().Clock.Mode != "light" {
		t.Fatal("initial")
	}
	mk("..v2", "clock:\n  mode: normal\n")
	if err := os.Symlink("..v2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	c := next(t, ch)
	if c.err != nil || w.Current().Clock.Mode != "normal" {
		t.Fatalf("after swap: %v, mode %q", c.err, w.Current().Clock.Mode)
	}
}

func TestWatcherStartsWithoutFile(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	w, ch := startWatcher(t, path, policy.WithNow(func() time.Time { return now }))
	if st := w.LastReload(); !st.OK || !st.Defaults || !st.At.Equal(now) {
		t.Fatalf("status %+v", st)
	}
	if w.Current().Clock.Mode != kairos.DefaultPolicy().Clock.Mode {
		t.Fatal("not the defaults")
	}
	writeAtomic(t, path, "clock:\n  mode: normal\n")
	c := next(t, ch)
	if c.err != nil || w.Current().Clock.Mode != "normal" || w.LastReload().Defaults {
		t.Fatalf("after create: %v %+v", c.err, w.LastReload())
	}
}

func TestNewWatcherRefusesInvalidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "clokc: {}\n")
	w, err := policy.NewWatcher(path, nil, nil)
	if err == nil {
		w.Close()
		t.Fatal("NewWatcher accepted an invalid file")
	}
	if want := path + `:1:1: unknown key "clokc", did you mean "clock"?`; err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestWatcherReloadMethodAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "clock:\n  mode: light\n")
	var mu sync.Mutex
	calls := 0
	w, err := policy.NewWatcher(path, nil, func(*kairos.Policy, error) { mu.Lock(); calls++; mu.Unlock() },
		policy.WithDebounce(time.Hour)) // events never fire in this test: only Reload
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, "clock:\n  mode: bad\n")
	if err := w.Reload(); err == nil {
		t.Fatal("Reload accepted an invalid file")
	}
	write(t, path, "clock:\n  mode: normal\n")
	if err := w.Reload(); err != nil || w.Current().Clock.Mode != "normal" {
		t.Fatalf("Reload: %v mode %q", err, w.Current().Clock.Mode)
	}
	mu.Lock()
	if calls != 2 {
		t.Errorf("onChange called %d times, want 2", calls)
	}
	mu.Unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if w.Current() == nil {
		t.Fatal("Current after Close is nil")
	}
}

// TestWatcherHammer reads Current from many goroutines while the file is
// reloaded (run with -race).
func TestWatcherHammer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, "agent:\n  max_steps: 1\n")
	w, err := policy.NewWatcher(path, nil, nil, policy.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := w.Current().Agent.MaxSteps
				if n < last {
					t.Errorf("went back from %d to %d", last, n)
					return
				}
				last = n
				_ = w.LastReload()
			}
		}()
	}
	for i := 2; i <= 50; i++ {
		write(t, path, "agent:\n  max_steps: "+itoa(i)+"\n")
		if err := w.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if got := w.Current().Agent.MaxSteps; got != 50 {
		t.Fatalf("max_steps %d", got)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
