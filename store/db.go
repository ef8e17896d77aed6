package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the lock pool
)

// Dialects.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Config selects and tunes the database.
type Config struct {
	DataDir     string // SQLite lives at DataDir/kairos.db
	DatabaseURL string // postgres://… switches to PostgreSQL
	Logger      *slog.Logger
	// SkipMigrate leaves the schema alone (for tools that only read).
	SkipMigrate bool
	// ReadOnly opens SQLite with mode=ro, creates nothing (a missing
	// database is ENOTFOUND) and migrates nothing: commands that only read.
	ReadOnly bool
}

// DB is an open database.
type DB struct {
	gdb     *gorm.DB
	hot     *gorm.DB // gorm with prepared statements, for the per-turn reads outside transactions
	stmts   hotStmts // the per-turn statements (hot.go)
	sqlDB   *sql.DB
	dialect string
	path    string // SQLite file, "" for PostgreSQL
	dsn     string // PostgreSQL URL, for the chat-lock pool
	log     *slog.Logger

	lockOnce sync.Once
	lockDB   *sql.DB // PostgreSQL: connections that only hold chat locks
	lockErr  error

	// Now is the clock used for bookkeeping timestamps (tests inject it).
	Now func() time.Time
}

// Open opens the database and applies pending migrations.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db := &DB{log: log.With("component", "store"), Now: time.Now}
	gcfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
		NowFunc:                func() time.Time { return db.Now() },
	}
	var err error
	if cfg.DatabaseURL != "" {
		if !strings.HasPrefix(cfg.DatabaseURL, "postgres://") && !strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
			return nil, kairos.Errorf(kairos.EINVALID, "KAIROS_DATABASE_URL must be a postgres:// URL")
		}
		db.dialect = DialectPostgres
		db.dsn = cfg.DatabaseURL
		db.gdb, err = gorm.Open(postgres.Open(cfg.DatabaseURL), gcfg)
		if err != nil {
			return nil, fmt.Errorf("open postgres %s: %w", redactURL(cfg.DatabaseURL), scrubErr(err, cfg.DatabaseURL))
		}
	} else {
		dir := cfg.DataDir
		if dir == "" {
			dir = "data"
		}
		db.dialect = DialectSQLite
		db.path = filepath.Join(dir, "kairos.db")
		dsn := sqliteDSN(db.path)
		if cfg.ReadOnly {
			if _, err := os.Stat(db.path); err != nil {
				return nil, kairos.Errorf(kairos.ENOTFOUND, "no database at %s (KAIROS_DATA_DIR; `kairos migrate` or `kairos run` creates it)", db.path)
			}
			dsn = "file:" + db.path + "?mode=ro&_busy_timeout=5000&_foreign_keys=on"
		} else if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		} else if err := ownerOnly(db.path, db.log); err != nil {
			return nil, err
		}
		dial := sqlite.Open(dsn)
		if !cfg.ReadOnly {
			dial = sqlite.New(sqlite.Config{Conn: openGatedSQLite(db.path, dsn)})
		}
		db.gdb, err = gorm.Open(dial, gcfg)
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
	}
	db.hot = db.gdb.Session(&gorm.Session{PrepareStmt: true})
	db.sqlDB, err = db.gdb.DB()
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.setPool()
	if err := db.sqlDB.PingContext(ctx); err != nil {
		db.sqlDB.Close()
		return nil, fmt.Errorf("ping database: %w", scrubErr(err, cfg.DatabaseURL))
	}
	if !cfg.SkipMigrate && !cfg.ReadOnly {
		if _, err := db.Migrate(ctx); err != nil {
			db.sqlDB.Close()
			return nil, err
		}
	}
	return db, nil
}

// ownerOnly creates the SQLite file 0600 when there is none (SQLite would
// create it 0644, and its -wal and -shm take the database file's mode), and
// sets an existing file, -wal or -shm that others may read to 0600, saying
// so in one line. A file it may not change (another owner) is only warned of.
func ownerOnly(path string, log *slog.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close() // an empty file is an empty database to SQLite
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create database file: %w", err)
	}
	var fixed, failed []string
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		was := fmt.Sprintf("%s (was %04o)", filepath.Base(p), fi.Mode().Perm())
		if err := os.Chmod(p, 0o600); err != nil {
			failed = append(failed, was)
			continue
		}
		fixed = append(fixed, was)
	}
	if len(fixed) > 0 {
		log.Warn("database files were readable by other users; now 0600", "dir", filepath.Dir(path), "files", strings.Join(fixed, ", "))
	}
	if len(failed) > 0 {
		log.Warn("database files are readable by other users and could not be changed (chmod 600 them)", "dir", filepath.Dir(path), "files", strings.Join(failed, ", "))
	}
	return nil
}

// setPool sizes the connection pool for the dialect.
func (db *DB) setPool() {
	if db.dialect == DialectSQLite {
		// WAL: readers beside one writer; the gate (sqlitegate.go) queues
		// this process's writers, BEGIN IMMEDIATE takes the lock up front,
		// the busy timeout waits for other processes'. Open connections
		// are unbounded: queued writers hold theirs, and the gate's holder
		// may need one more (a read, gorm's statement cache preparing).
		// Up to 32 given back stay open (more than the turns at once plus
		// the background's), idle ones close after 5 minutes: closing at
		// 8 made a 16-worker flood reopen a connection every 6 turns,
		// each reopening running the pragmas and preparing every hot
		// statement again.
		db.sqlDB.SetMaxOpenConns(0)
		db.sqlDB.SetMaxIdleConns(32)
	} else {
		// Every connection may stay while idle: a new one is a server
		// process to start, and its statements to prepare again.
		db.sqlDB.SetMaxOpenConns(16)
		db.sqlDB.SetMaxIdleConns(16)
	}
	db.sqlDB.SetConnMaxIdleTime(5 * time.Minute)
}

// sqliteDSN: WAL, a 5 s busy timeout, foreign keys, synchronous=NORMAL
// (durable at checkpoints, safe with WAL) and IMMEDIATE write transactions.
func sqliteDSN(path string) string {
	return fmt.Sprintf("file:%s?_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate", path, sqliteBusyMS)
}

// sqliteBusyMS is the busy timeout: how long a write waits for another
// process's writer (tests shorten it).
var sqliteBusyMS = 5000

// Gorm returns the gorm handle, for the store's own repositories.
func (db *DB) Gorm() *gorm.DB { return db.gdb }

// SQL returns the database/sql handle.
func (db *DB) SQL() *sql.DB { return db.sqlDB }

// Dialect returns DialectSQLite or DialectPostgres.
func (db *DB) Dialect() string { return db.dialect }

// Path returns the SQLite file ("" on PostgreSQL).
func (db *DB) Path() string { return db.path }

// Ping checks the database is reachable (for /readyz).
func (db *DB) Ping(ctx context.Context) error { return db.sqlDB.PingContext(ctx) }

// lockPool returns a separate pool for chat locks: a held advisory lock
// pins its connection for a whole turn, and taking those from the main
// pool could starve the turns themselves.
func (db *DB) lockPool() (*sql.DB, error) {
	db.lockOnce.Do(func() {
		db.lockDB, db.lockErr = sql.Open("pgx", db.dsn)
		if db.lockErr == nil {
			db.lockDB.SetMaxOpenConns(256)
			db.lockDB.SetMaxIdleConns(16)
		}
	})
	return db.lockDB, db.lockErr
}

// Close closes the database.
func (db *DB) Close() error {
	if db.lockDB != nil {
		db.lockDB.Close()
	}
	db.closeStmts()
	if db.dialect == DialectSQLite {
		// Fold the WAL back so the file is self-contained at rest.
		_, _ = db.sqlDB.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	}
	return db.sqlDB.Close()
}

// SQLiteVersion returns the linked SQLite library version ("" on PostgreSQL).
func (db *DB) SQLiteVersion(ctx context.Context) (string, error) {
	if db.dialect != DialectSQLite {
		return "", nil
	}
	var v string
	err := db.sqlDB.QueryRowContext(ctx, "select sqlite_version()").Scan(&v)
	return v, err
}

// ms converts a time to stored unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS converts stored unix milliseconds to a UTC time.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromMSP(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := fromMS(*v)
	return &t
}

// redactURL hides the password of a database URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// scrubErr removes a secret-bearing URL from an error's text.
func scrubErr(err error, raw string) error {
	if err == nil || raw == "" {
		return err
	}
	u, perr := url.Parse(raw)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), pw, "xxxxx"))
}
