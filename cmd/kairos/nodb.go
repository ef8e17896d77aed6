package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kairos-agent/kairos"
)

// With no database yet, a command that only reads answers as it would on
// an empty database (`[]`, an empty clock state, no users) and exits 0,
// and says once on stderr that there is no database; a command that
// would change something finds nothing to change and exits 1 saying so.
// Neither creates the data folder, the database or a migration (README,
// "No database yet").

// noDatabase is the SQLite file a command would open when it does not
// exist yet, or "" when there is one (or the database is PostgreSQL,
// which always exists once its URL is set).
func (m *Main) noDatabase() string {
	if m.Config.DatabaseURL != "" {
		return ""
	}
	path := filepath.Join(m.Config.DataDir, "kairos.db")
	if m.Config.DataDir == "" {
		path = filepath.Join("data", "kairos.db")
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return path
	}
	return ""
}

// saidNoDatabase prints the note for a reading command and reports
// whether there is no database (the command then prints its empty
// answer).
func (m *Main) saidNoDatabase() bool {
	path := m.noDatabase()
	if path == "" {
		return false
	}
	fmt.Fprintf(m.Stderr, "kairos: no database yet at %s (KAIROS_DATA_DIR): nothing recorded, nothing created\n", path)
	return true
}

// nothingToChange is a changing command's error when there is no
// database: what it looked for is not there, and nothing was created.
func (m *Main) nothingToChange(what string) error {
	return fmt.Errorf("%s: there is no database yet at %s (KAIROS_DATA_DIR); nothing changed, nothing created", what, m.noDatabase())
}

// emptyClocks is the clock state of a database that does not exist yet:
// `kairos clock export` prints an empty §10.2 document from it.
type emptyClocks struct{ kairos.ClockStore }

func (emptyClocks) ExportClock(context.Context) (*kairos.ClockSnapshot, error) {
	return &kairos.ClockSnapshot{}, nil
}

// dryClocks takes an import without storing it: `kairos clock import`
// checks its file with it before it opens (and so creates) the database.
type dryClocks struct{ kairos.ClockStore }

func (dryClocks) ImportClock(context.Context, *kairos.ClockSnapshot) error { return nil }
