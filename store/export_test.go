package store

import (
	"io/fs"
	"time"
)

// ExportedMigration exposes a loaded migration to the external tests.
type ExportedMigration struct {
	Version int64
	Name    string
	SQL     string
}

// LoadMigrations exposes loadMigrations to the external tests.
func LoadMigrations(fsys fs.FS, dialect string) ([]ExportedMigration, error) {
	ms, err := loadMigrations(fsys, dialect)
	out := make([]ExportedMigration, len(ms))
	for i, m := range ms {
		out[i] = ExportedMigration{m.version, m.name, m.sql}
	}
	return out, err
}

// SetSQLiteBusyTimeout sets the busy timeout of databases opened after it
// and returns the function that restores it.
func SetSQLiteBusyTimeout(ms int) (restore func()) {
	was := sqliteBusyMS
	sqliteBusyMS = ms
	return func() { sqliteBusyMS = was }
}

// SetGateWait sets how long a writer waits in the SQLite write gate and
// returns the function that restores it.
func SetGateWait(d time.Duration) (restore func()) {
	was := gateWait
	gateWait = d
	return func() { gateWait = was }
}
