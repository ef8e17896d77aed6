package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the SQLite database to path with
// VACUUM INTO (online: writers keep going). The file must not exist. On
// PostgreSQL use pg_dump instead.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.dialect != DialectSQLite {
		return fmt.Errorf("backup: PostgreSQL databases are backed up with pg_dump")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Stat(abs); err == nil {
		return fmt.Errorf("backup: %s already exists", path)
	}
	if strings.ContainsRune(abs, 0) {
		return fmt.Errorf("backup: bad path")
	}
	if _, err := db.sqlDB.ExecContext(ctx, "VACUUM INTO ?", abs); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}
