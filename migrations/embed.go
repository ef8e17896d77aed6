// Package migrations holds the versioned SQL schema of Kairos, embedded in
// the binary. Files are named NNNNNN_name.up.sql and applied in order by
// store.Migrate, each inside a transaction, and recorded in the
// schema_migrations table.
//
// One file serves SQLite and PostgreSQL. Two placeholders are replaced per
// dialect: {{AUTOID}} (an auto-incrementing 64-bit primary key) and {{BLOB}}
// (a byte column). When a step cannot be written portably (FTS5, tsvector),
// NNNNNN_name.sqlite.up.sql and NNNNNN_name.postgres.up.sql replace the
// plain file for their dialect. Timestamps are BIGINT unix milliseconds.
//
// This package must not contain Go logic beyond exposing the files.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
