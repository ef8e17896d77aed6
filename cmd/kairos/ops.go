package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/sandbox"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/tools/cell"
)

func (m *Main) runVersion() error {
	bi, ok := debug.ReadBuildInfo()
	writeVersion(m.Stdout, bi, ok) // version.go
	return nil
}

// runMigrate is `kairos migrate`.
func (m *Main) runMigrate(ctx context.Context) error {
	log := m.logger()
	db, err := store.Open(ctx, store.Config{DataDir: m.Config.DataDir, DatabaseURL: m.Config.DatabaseURL, Logger: log, SkipMigrate: true})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINVALID {
			return usagef("%s", kairos.ErrorMessage(err))
		}
		return fmt.Errorf("open database: %s", oneLine(err))
	}
	m.onClose(db.Close)
	done, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	all, _ := db.AppliedMigrations(ctx)
	fmt.Fprintf(m.Stdout, "applied %d migration(s); schema at version %d\n", len(done), last(all))
	return nil
}

func last(vs []int64) int64 {
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1]
}

// runPolicy is `kairos policy check [FILE]`.
//
// With no file at the default path (no FILE, KAIROS_POLICY unset) the
// built-in defaults apply, as they do for `kairos run`: it says so and
// checks them. A FILE named on the command line, or by KAIROS_POLICY,
// must exist (run refuses a KAIROS_POLICY that names no file).
func (m *Main) runPolicy(ctx context.Context, path string, named bool) error {
	res, err := policy.LoadFile(path)
	if err != nil {
		fmt.Fprintln(m.Stdout, err.Error())
		return &quietError{code: 1}
	}
	if res.Defaults && (named || m.Config.PolicySet) {
		fmt.Fprintf(m.Stdout, "%s: no such file\n", path)
		return &quietError{code: 1}
	}
	if res.Defaults {
		if err := policy.Validate(res.Policy); err != nil {
			fmt.Fprintf(m.Stdout, "the built-in defaults are invalid: %v\n", err)
			return &quietError{code: 1}
		}
		fmt.Fprintf(m.Stdout, "%s: no such file; the built-in defaults apply (as `kairos run` uses them): ok\n", path)
		return nil
	}
	fmt.Fprintf(m.Stdout, "%s: ok\n", path)
	return nil
}

// quietError ends with an exit status and no further message (the command
// printed its own).
type quietError struct{ code int }

func (e *quietError) Error() string { return "" }

// runClockExport is `kairos clock export [FILE] [--force]`.
func (m *Main) runClockExport(ctx context.Context, file string, force bool) error {
	var cs kairos.ClockStore = emptyClocks{}
	if !m.saidNoDatabase() {
		db, err := m.openStoreRO(ctx, m.logger())
		if err != nil {
			return err
		}
		cs = store.NewClockStore(db)
	}
	if file == "" {
		return clockstate.Export(ctx, cs, m.Stdout)
	}
	export := clockstate.ExportNewFile
	if force {
		export = clockstate.ExportFile
	}
	if err := export(ctx, cs, file); err != nil {
		if kairos.ErrorCode(err) == kairos.ECONFLICT {
			return fmt.Errorf("%s", kairos.ErrorMessage(err))
		}
		return err
	}
	fmt.Fprintf(m.Stderr, "clock state written to %s\n", file)
	return nil
}

// runClockImport is `kairos clock import FILE`.
func (m *Main) runClockImport(ctx context.Context, file string) error {
	// The file is read and checked before the database is opened: a
	// missing or malformed file creates nothing.
	f, err := os.Open(file)
	if err != nil {
		return usagef("clock import: %v; nothing imported, nothing created", err)
	}
	err = clockstate.Import(ctx, dryClocks{}, f)
	f.Close()
	if err != nil {
		return usagef("%s: %s; nothing imported", file, kairos.ErrorMessage(err))
	}
	db, err := m.openStore(ctx, m.logger())
	if err != nil {
		return err
	}
	if err := clockstate.ImportFile(ctx, store.NewClockStore(db), file); err != nil {
		if kairos.ErrorCode(err) == kairos.EINVALID {
			return usagef("%s", kairos.ErrorMessage(err))
		}
		return err
	}
	fmt.Fprintf(m.Stderr, "clock state imported from %s\n", file)
	return nil
}

func (m *Main) clockParse(tz, at string, text []string) error {
	ref := time.Now()
	if at != "" {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return usagef("--at must be RFC3339 (e.g. 2026-03-08T09:00:00-05:00): %v", err)
		}
		ref = t
	}
	res, err := clockstate.ParseCLI(strings.Join(text, " "), tz, ref)
	if err != nil {
		return usagef("%s", kairos.ErrorMessage(err))
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// runCell is `kairos cell run FILE.js`.
func (m *Main) runCell(ctx context.Context, file string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return usagef("read %s: %v", file, err)
	}
	log := m.logger()
	pol, _, err := m.loadPolicy(log, func(*kairos.Policy, error) {})
	if err != nil {
		return err
	}
	p := pol()
	if !p.Features.CLIExec {
		return usagef("code cells are turned off by the policy (features.cli_exec is false in %s); nothing was run", m.Config.PolicyPath)
	}
	// The compilation cache is used when the data folder exists; this
	// command creates none.
	cache := m.SandboxCacheDir
	if fi, err := os.Stat(m.Config.DataDir); cache == "" && err == nil && fi.IsDir() {
		cache = m.sandboxCache()
	}
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: cache, Logger: log})
	if err != nil {
		return fmt.Errorf("start sandbox: %w", err)
	}
	m.onClose(func() error { return r.Close(context.Background()) })
	// The operator's own cell: the policy's budgets and network grant,
	// every configured secret when features.credentials_access is on; the
	// verb follows what the code does.
	verb := kairos.VerbBuild
	if cell.Scan(string(src)).Network {
		verb = kairos.VerbResearch
	}
	task := &kairos.CellTask{Code: string(src), Verb: verb, Budget: cell.BudgetFor(p, verb), Network: cell.GrantFor(p),
		Secrets: m.Config.Secrets, Credentials: p.Features.CredentialsAccess, Now: time.Now()}
	res, err := r.Run(ctx, task)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cellJSON(res)); err != nil {
		return err
	}
	if !res.Success {
		return &quietError{code: 1}
	}
	return nil
}

func cellJSON(r *kairos.CellResult) map[string]any {
	out := map[string]any{"id": r.ID, "success": r.Success, "duration_ms": r.Duration.Milliseconds(), "exit_code": r.ExitCode,
		"stdout": r.Stdout, "stderr": r.Stderr, "network_calls": r.NetworkCalls}
	if len(r.Output) > 0 {
		out["output"] = r.Output
	}
	if !r.Success {
		out["error_category"] = r.ErrorCategory
		out["error"] = r.Error
	}
	if r.Checkpoint != nil {
		out["checkpoint"] = r.Checkpoint
	}
	return out
}

// runBackup is `kairos backup FILE`.
func (m *Main) runBackup(ctx context.Context, file string) error {
	db, err := m.openStoreRO(ctx, m.logger())
	if err != nil {
		return err
	}
	if err := db.Backup(ctx, file); err != nil {
		if kairos.ErrorCode(err) == kairos.ECONFLICT {
			return fmt.Errorf("%s", kairos.ErrorMessage(err))
		}
		return err
	}
	fmt.Fprintf(m.Stderr, "backup written to %s\n", file)
	return nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so a reader sees the old or the new file, never half of one.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
