package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Backup writes a consistent copy of the SQLite database to path with
// VACUUM INTO (online: writers keep going; a read-only handle works too).
// The copy is written 0600 into a temporary file beside path and then
// linked into place, so path never holds a partial copy and an existing
// file is never replaced (ECONFLICT). On PostgreSQL use pg_dump instead.
func (db *DB) Backup(ctx context.Context, path string) (err error) {
	if db.dialect != DialectSQLite {
		return fmt.Errorf("backup: PostgreSQL databases are backed up with pg_dump")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if strings.ContainsRune(abs, 0) {
		return fmt.Errorf("backup: bad path")
	}
	if _, err := os.Stat(abs); err == nil {
		return kairos.Errorf(kairos.ECONFLICT, "backup: %s already exists", path)
	}
	// VACUUM INTO accepts an existing empty file and keeps its mode.
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("backup: %w", err)
	}
	tmp.Close()
	if _, err := db.sqlDB.ExecContext(ctx, "VACUUM INTO ?", tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Link(tmpName, abs); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return kairos.Errorf(kairos.ECONFLICT, "backup: %s already exists", path)
		}
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}
