// Package store persists Kairos's state with gorm: SQLite by default
// (KAIROS_DATA_DIR/kairos.db, WAL, busy timeout, foreign keys) and
// PostgreSQL when a postgres:// URL is given. It applies the embedded
// migrations of package migrations and implements the root package's store
// interfaces (sessions, clock state, memories, code executions, updates).
//
// It is the only importer of gorm. It must not hold business rules: what to
// store and when is decided by clockstate, agent, tools and bot.
package store
