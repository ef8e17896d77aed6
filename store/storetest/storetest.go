// Package storetest opens real, migrated databases for tests: a SQLite file
// in the test's temporary directory, or a fresh PostgreSQL schema when
// KAIROS_TEST_DATABASE_URL is set. It must not be imported by production
// code.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/kairos-agent/kairos/store"

	_ "github.com/jackc/pgx/v5/stdlib" // for schema set-up and clean-up
)

// EnvURL names the variable that points tests at a PostgreSQL server.
const EnvURL = "KAIROS_TEST_DATABASE_URL"

// MustOpenDB returns a migrated database that is closed (and on PostgreSQL
// dropped) when the test ends.
func MustOpenDB(tb testing.TB) *store.DB {
	tb.Helper()
	return MustOpenDBDialect(tb, os.Getenv(EnvURL) != "")
}

// MustOpenSQLite always opens SQLite, whatever the environment says.
func MustOpenSQLite(tb testing.TB) *store.DB {
	tb.Helper()
	return MustOpenDBDialect(tb, false)
}

// MustOpenDBDialect opens PostgreSQL when postgres is true (skipping the
// test when no server is configured), SQLite otherwise.
func MustOpenDBDialect(tb testing.TB, postgres bool) *store.DB {
	tb.Helper()
	ctx := context.Background()
	cfg := store.Config{DataDir: tb.TempDir()}
	if postgres {
		base := os.Getenv(EnvURL)
		if base == "" {
			tb.Skip(EnvURL + " not set: no PostgreSQL server")
		}
		cfg.DatabaseURL = FreshSchemaURL(tb, base)
	}
	db, err := store.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// FreshSchemaURL creates an empty schema on the PostgreSQL server at base
// and returns a URL whose search_path points at it; the schema is dropped
// when the test ends.
func FreshSchemaURL(tb testing.TB, base string) string {
	tb.Helper()
	ctx := context.Background()
	schema := "t_" + randHex(8)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	return WithSearchPath(base, schema)
}

// WithSearchPath adds search_path=schema to a PostgreSQL URL.
func WithSearchPath(raw, schema string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
