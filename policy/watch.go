package policy

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kairos-agent/kairos"
)

// Source gives the policy in force. Watcher and Static implement it.
// Packages outside policy need not import this interface: they should
// accept a `func() *kairos.Policy` (pass w.Current), which keeps them free
// of the policy package and trivial to test.
type Source interface {
	Current() *kairos.Policy
}

// Static returns a Source that always gives p (validated-for-use: nil
// means the defaults; the built-in blocked categories are merged in on a
// copy, p itself is not changed).
func Static(p *kairos.Policy) Source {
	if p == nil {
		p = kairos.DefaultPolicy()
	} else {
		cp := *p
		cp.Network.BlockedCategories = append([]string(nil), p.Network.BlockedCategories...)
		p = &cp
	}
	return staticSource{withBuiltins(p)}
}

type staticSource struct{ p *kairos.Policy }

func (s staticSource) Current() *kairos.Policy { return s.p }

// ReloadStatus is the outcome of the latest load of the policy file.
type ReloadStatus struct {
	At       time.Time // when the load was attempted
	OK       bool      // the file was valid and is in force
	Err      string    // why not, when !OK ("file:line:col: …" lines)
	Defaults bool      // the built-in defaults are in force (no file yet)
}

// WatchOption tunes a Watcher.
type WatchOption func(*Watcher)

// WithDebounce sets how long the file must stay quiet after a change
// before it is read (default 200ms): editors and Kubernetes write in
// several steps.
func WithDebounce(d time.Duration) WatchOption { return func(w *Watcher) { w.debounce = d } }

// WithNow injects the clock used for ReloadStatus.At.
func WithNow(now func() time.Time) WatchOption { return func(w *Watcher) { w.now = now } }

// Watcher keeps the policy file's last good version in force and reloads
// it when the file changes. Current is lock-free.
//
// It watches the file's directory (and the directory of the file a
// symlink points to), not the file, so it survives editors that save by
// renaming a temporary file over the original and Kubernetes ConfigMap
// updates that swap the `..data` symlink. Events are debounced; a reload
// whose bytes equal the previous attempt's is skipped, so onChange runs
// once per real change, and an empty file seen on an event is taken for a
// save in progress and skipped (Reload, or a later non-empty write,
// applies it).
//
// A changed file is validated before it replaces the policy in force. When
// it is invalid, or removed, the last good policy stays in force and
// onChange receives that policy and the error (for the operators).
type Watcher struct {
	path     string
	log      *slog.Logger
	onChange func(*kairos.Policy, error)
	now      func() time.Time
	debounce time.Duration

	cur    atomic.Pointer[kairos.Policy]
	status atomic.Pointer[ReloadStatus]

	mu       sync.Mutex // serialises reloads
	lastSum  [sha256.Size]byte
	lastSeen bool // lastSum is set (a file was read at least once)
	missing  bool // the last attempt found no file
	defaults bool // the built-in defaults are in force (no file loaded yet)

	fsw       *fsnotify.Watcher
	names     map[string]bool // base names in the watched dirs that matter
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// NewWatcher loads the policy at path and starts watching it. An invalid
// file is an error (start-up refuses a broken policy); a missing file means
// the defaults, until the file appears. onChange (may be nil) is called
// after each reload that changed something: with the new policy and nil,
// or with the policy still in force and the error. It runs on the
// watcher's goroutine, one call at a time, and must not call Reload.
// When the directory cannot be watched the watcher still works, without
// hot reload (logged as a warning; Reload still works).
func NewWatcher(path string, logger *slog.Logger, onChange func(p *kairos.Policy, err error), opts ...WatchOption) (*Watcher, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{
		path:     path,
		log:      logger.With("component", "policy"),
		onChange: onChange,
		now:      time.Now,
		debounce: 200 * time.Millisecond,
		done:     make(chan struct{}),
		names:    map[string]bool{},
	}
	for _, o := range opts {
		o(w)
	}

	res, data, err := w.read()
	if err != nil {
		return nil, err
	}
	w.cur.Store(res.Policy)
	w.status.Store(&ReloadStatus{At: w.now(), OK: true, Defaults: res.Defaults})
	w.missing, w.defaults = res.Defaults, res.Defaults
	if data != nil {
		w.lastSum, w.lastSeen = sha256.Sum256(data), true
	}
	if res.Defaults {
		w.log.Info("no policy file, using the built-in defaults", "path", path)
	} else {
		w.log.Info("policy loaded", "path", path)
	}

	if err := w.startWatching(); err != nil {
		w.log.Warn("policy hot reload disabled", "path", path, "err", err)
		return w, nil
	}
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

// Current returns the policy in force. Callers must not modify it.
func (w *Watcher) Current() *kairos.Policy { return w.cur.Load() }

// LastReload reports the latest load attempt.
func (w *Watcher) LastReload() ReloadStatus { return *w.status.Load() }

// Reload reads the file now (e.g. on SIGHUP) and returns the validation
// error, if any; it calls onChange as a file event would.
func (w *Watcher) Reload() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reloadLocked(true)
}

// Close stops watching. It is safe to call more than once.
func (w *Watcher) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.done)
		if w.fsw != nil {
			err = w.fsw.Close()
		}
		w.wg.Wait()
	})
	return err
}

func (w *Watcher) read() (LoadResult, []byte, error) {
	data, err := readFile(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return LoadResult{Policy: withBuiltins(kairos.DefaultPolicy()), Defaults: true, Path: w.path}, nil, nil
	}
	if err != nil {
		return LoadResult{Path: w.path}, nil, err
	}
	p, err := Parse(w.path, data)
	if err != nil {
		return LoadResult{Path: w.path}, data, err
	}
	return LoadResult{Policy: p, Path: w.path}, data, nil
}

// reloadLocked re-reads the file. Unless force, nothing happens when the
// bytes (or the absence of the file) are the same as last time.
func (w *Watcher) reloadLocked(force bool) error {
	res, data, err := w.read()
	now := w.now()
	if err == nil && res.Defaults { // no file
		if !force && w.missing {
			return nil
		}
		w.missing = true
		if w.defaults {
			w.status.Store(&ReloadStatus{At: now, OK: true, Defaults: true})
			return nil
		}
		// The file was there and is gone: keep the last good policy
		// rather than silently falling back to the defaults.
		err = Errors{{File: w.path, Msg: "policy file removed; the last good policy stays in force"}}
		w.status.Store(&ReloadStatus{At: now, OK: false, Err: err.Error()})
		w.log.Warn("policy file removed; keeping the last good policy", "path", w.path)
		w.notify(w.Current(), err)
		return err
	}
	if !force && data != nil && len(data) == 0 {
		// An in-place save truncates before it writes: wait for the
		// write's own event rather than applying the defaults for a moment.
		return nil
	}
	if data != nil {
		sum := sha256.Sum256(data)
		if !force && !w.missing && w.lastSeen && sum == w.lastSum {
			return nil
		}
		w.missing, w.lastSum, w.lastSeen = false, sum, true
	}
	if err != nil {
		w.status.Store(&ReloadStatus{At: now, OK: false, Err: err.Error(), Defaults: w.defaults})
		w.log.Warn("policy reload failed; keeping the last good policy", "path", w.path, "err", err)
		w.notify(w.Current(), err)
		return err
	}
	w.cur.Store(res.Policy)
	w.defaults = false
	w.status.Store(&ReloadStatus{At: now, OK: true})
	w.log.Info("policy reloaded", "path", w.path)
	w.notify(res.Policy, nil)
	return nil
}

func (w *Watcher) notify(p *kairos.Policy, err error) {
	if w.onChange == nil {
		return
	}
	select {
	case <-w.done:
		return
	default:
	}
	w.onChange(p, err)
}

func (w *Watcher) startWatching() error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("start watcher: %w", err)
	}
	abs, err := filepath.Abs(w.path)
	if err != nil {
		fsw.Close()
		return fmt.Errorf("resolve policy path: %w", err)
	}
	dirs := map[string]bool{filepath.Dir(abs): true}
	w.names[filepath.Base(abs)] = true
	if target, err := filepath.EvalSymlinks(abs); err == nil && target != abs {
		dirs[filepath.Dir(target)] = true
		w.names[filepath.Base(target)] = true
	}
	for dir := range dirs {
		if err := fsw.Add(dir); err != nil {
			fsw.Close()
			return fmt.Errorf("watch %s: %w", dir, err)
		}
	}
	w.fsw = fsw
	return nil
}

// relevant reports whether an event in a watched directory may change the
// file: its own name, or Kubernetes' `..data` style symlink swaps.
func (w *Watcher) relevant(ev fsnotify.Event) bool {
	base := filepath.Base(ev.Name)
	return w.names[base] || strings.HasPrefix(base, "..")
}

func (w *Watcher) loop() {
	defer w.wg.Done()
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-w.done:
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if !w.relevant(ev) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(w.debounce)
			} else {
				timer.Reset(w.debounce)
			}
			fire = timer.C
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.log.Warn("policy watcher error", "err", err)
		case <-fire:
			fire = nil
			w.mu.Lock()
			_ = w.reloadLocked(false)
			w.mu.Unlock()
		}
	}
}

var _ Source = (*Watcher)(nil)

var _ Source = (*Watcher)(nil)
