package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// pruneCode deletes code executions older than the policy's
// sessions.code_executions_retention (ISO-8601, e.g. P30D); an empty
// retention keeps them all.
func (s *Scheduler) pruneCode(ctx context.Context, now time.Time) (string, error) {
	keep := s.cfg.Policy().Sessions.CodeExecutionsRetention.Approx()
	if keep <= 0 {
		return "no retention set", ErrSkip
	}
	before := now.Add(-keep)
	n, err := s.cfg.Code.PruneExecutions(ctx, before)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted %d executions before %s", n, before.UTC().Format(time.RFC3339)), nil
}

// pruneAttemptsAfter is how long a pairing attempt window is kept: past
// the hour that counts (bot.AttemptWindow), with room to spare.
const pruneAttemptsAfter = 2 * time.Hour

// AccessLogKeep is how long the access log keeps an API or console
// request.
const AccessLogKeep = 30 * 24 * time.Hour

// Cutoffs turns the policy's retention into the times before which
// finished rows go. Token usage is cut at a UTC midnight, so a day is
// rolled up whole.
func Cutoffs(s kairos.SessionsPolicy, now time.Time) kairos.PruneCutoffs {
	before := func(d kairos.Duration) time.Time {
		if keep := d.Approx(); keep > 0 {
			return now.Add(-keep)
		}
		return time.Time{}
	}
	c := kairos.PruneCutoffs{
		Approvals: before(s.ApprovalsRetention), Updates: before(s.UpdatesRetention), Outbox: before(s.OutboxRetention),
		Firings: before(s.FiringsRetention), Attempts: now.Add(-pruneAttemptsAfter), AccessLog: now.Add(-AccessLogKeep),
	}
	if t := before(s.TokenUsageRetention); !t.IsZero() {
		c.TokenUsage = t.UTC().Truncate(24 * time.Hour)
	}
	return c
}

// pruneFinished deletes the finished bookkeeping rows the policy no
// longer keeps (decided approvals, processed updates, sent outbox rows,
// finished firings, ended attempt windows) and rolls old token usage up
// into per-day totals.
func (s *Scheduler) pruneFinished(ctx context.Context, now time.Time) (string, error) {
	n, err := s.cfg.Prune.PruneFinished(ctx, Cutoffs(s.cfg.Policy().Sessions, now))
	return n.String(), err
}

// Backup file names: kairos-<UTC stamp>.db in Config.BackupDir.
const (
	backupPrefix = "kairos-"
	backupSuffix = ".db"
	backupStamp  = "20060102T150405Z"
)

// BackupPath returns the scheduled backup file for now in dir.
func BackupPath(dir string, now time.Time) string {
	return filepath.Join(dir, backupPrefix+now.UTC().Format(backupStamp)+backupSuffix)
}

// backup writes a scheduled backup and keeps the newest BackupKeep ones.
func (s *Scheduler) backup(ctx context.Context, now time.Time) (string, error) {
	dir := s.cfg.BackupDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("backup dir: %w", err)
	}
	path := BackupPath(dir, now)
	if _, err := os.Stat(path); err == nil {
		return path + " exists", ErrSkip
	}
	if err := s.cfg.Backup(ctx, path); err != nil {
		return "", err
	}
	removed, err := pruneBackups(dir, s.cfg.BackupKeep)
	detail := fmt.Sprintf("wrote %s", filepath.Base(path))
	if removed > 0 {
		detail += fmt.Sprintf(", removed %d old backups", removed)
	}
	return detail, err
}

// pruneBackups deletes all but the newest keep scheduled backups in dir
// (only files named like BackupPath's; an operator's own files stay).
func pruneBackups(dir string, keep int) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("list backups: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, backupPrefix) || !strings.HasSuffix(n, backupSuffix) {
			continue
		}
		if _, err := time.Parse(backupStamp, strings.TrimSuffix(strings.TrimPrefix(n, backupPrefix), backupSuffix)); err != nil {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names) // the stamp sorts by time
	removed := 0
	for len(names) > keep {
		if err := os.Remove(filepath.Join(dir, names[0])); err != nil {
			return removed, fmt.Errorf("remove old backup: %w", err)
		}
		names = names[1:]
		removed++
	}
	return removed, nil
}
