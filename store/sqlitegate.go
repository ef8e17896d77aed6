package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// SQLite has one writer at a time. Left to itself, a writer that finds
// the database locked sleeps and retries (the busy handler) until the
// busy timeout; under contention that is a lottery, and one writer can
// lose every draw and fail with "database is locked" while the others
// go on. So this process's writers queue here first, in arrival order,
// and reach SQLite one at a time: a write waits for the ones before it,
// never fails for them. The busy timeout stays for writers in other
// processes (a `kairos` command beside `kairos run`).
//
// The gate sits in the driver, so every write takes it, whichever path
// it comes by (gorm, the hot path's statements, migrations): a
// transaction holds it from BEGIN to COMMIT or ROLLBACK (all are
// IMMEDIATE, so all write); a statement outside a transaction holds it
// while it runs, unless SQLite says it only reads.

// writeGate is a FIFO lock that a waiter leaves when its context ends or
// after gateWait.
type writeGate chan struct{}

// gateWait bounds the wait in the gate as the busy timeout bounded the
// wait in SQLite: a writer that waits this long is told the database is
// locked instead of waiting for ever (should a transaction wait, through
// the pool, for a connection that a queued writer holds).
var gateWait = 30 * time.Second

func (g writeGate) lock(ctx context.Context) error {
	select {
	case g <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(gateWait)
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("database is locked: waited %s for this process's other writers", gateWait)
	}
}

func (g writeGate) unlock() { <-g }

// gates holds one gate per database file, so two writing handles on one
// file in one process (tests, a command beside an open store) queue
// together.
var gates sync.Map // path -> writeGate

func gateFor(path string) writeGate {
	g, _ := gates.LoadOrStore(path, make(writeGate, 1))
	return g.(writeGate)
}

// openGatedSQLite returns a database/sql handle on dsn whose writers take
// the file's gate.
func openGatedSQLite(path, dsn string) *sql.DB {
	return sql.OpenDB(&gatedConnector{dsn: dsn, gate: gateFor(path)})
}

type gatedConnector struct {
	dsn  string
	gate writeGate
}

func (c *gatedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := (&sqlite3.SQLiteDriver{}).Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &gatedConn{SQLiteConn: conn.(*sqlite3.SQLiteConn), gate: c.gate}, nil
}

func (c *gatedConnector) Driver() driver.Driver { return &sqlite3.SQLiteDriver{} }

// gatedConn is one SQLite connection. database/sql uses a connection from
// one goroutine at a time, so inTx needs no lock.
type gatedConn struct {
	*sqlite3.SQLiteConn
	gate writeGate
	inTx bool // a transaction of this connection holds the gate
}

func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.gate.lock(ctx); err != nil {
		return nil, err
	}
	tx, err := c.SQLiteConn.BeginTx(ctx, opts)
	if err != nil {
		c.gate.unlock()
		return nil, err
	}
	c.inTx = true
	return &gatedTx{Tx: tx, conn: c}, nil
}

// Begin is the pre-context form; database/sql calls BeginTx.
func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// take takes the gate for a statement that writes, outside a
// transaction; taken is false when it needs none (it only reads, or this
// connection's transaction holds the gate already).
func (c *gatedConn) take(ctx context.Context, writes bool) (taken bool, err error) {
	if !writes || c.inTx {
		return false, nil
	}
	if err := c.gate.lock(ctx); err != nil {
		return false, err
	}
	return true, nil
}

// ExecContext runs query (which may hold several statements, as the
// migrations' do) under the gate, outside a transaction.
func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	taken, err := c.take(ctx, !onlyReads(query))
	if err != nil {
		return nil, err
	}
	if taken {
		defer c.gate.unlock()
	}
	return c.SQLiteConn.ExecContext(ctx, query, args)
}

// QueryContext is left to database/sql's prepare-then-query path (through
// PrepareContext), where the statement can say whether it writes.
func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return nil, driver.ErrSkip
}

func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.SQLiteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s := st.(*sqlite3.SQLiteStmt)
	return &gatedStmt{SQLiteStmt: s, conn: c, writes: !s.Readonly()}, nil
}

func (c *gatedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// onlyReads: statements run by Exec that must not wait for writers.
// VACUUM INTO (backup) reads for as long as the copy takes.
func onlyReads(query string) bool {
	q := strings.TrimSpace(query)
	return len(q) >= 11 && strings.EqualFold(q[:11], "VACUUM INTO")
}

type gatedTx struct {
	driver.Tx
	conn *gatedConn
	done bool
}

func (t *gatedTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

func (t *gatedTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}

func (t *gatedTx) release() {
	if !t.done {
		t.done = true
		t.conn.inTx = false
		t.conn.gate.unlock()
	}
}

type gatedStmt struct {
	*sqlite3.SQLiteStmt
	conn   *gatedConn
	writes bool
}

func (s *gatedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	taken, err := s.conn.take(ctx, s.writes)
	if err != nil {
		return nil, err
	}
	if taken {
		defer s.conn.gate.unlock()
	}
	return s.SQLiteStmt.ExecContext(ctx, args)
}

// QueryContext of a statement that writes (INSERT … RETURNING) holds the
// gate until its rows are closed: SQLite keeps the write lock as long.
func (s *gatedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	taken, err := s.conn.take(ctx, s.writes)
	if err != nil {
		return nil, err
	}
	rows, err := s.SQLiteStmt.QueryContext(ctx, args)
	if !taken {
		return rows, err
	}
	if err != nil {
		s.conn.gate.unlock()
		return nil, err
	}
	return &gatedRows{SQLiteRows: rows.(*sqlite3.SQLiteRows), gate: s.conn.gate}, nil
}

type gatedRows struct {
	*sqlite3.SQLiteRows
	gate   writeGate
	closed bool
}

func (r *gatedRows) Close() error {
	err := r.SQLiteRows.Close()
	if !r.closed {
		r.closed = true
		r.gate.unlock()
	}
	return err
}

var (
	_ driver.ConnBeginTx        = (*gatedConn)(nil)
	_ driver.ExecerContext      = (*gatedConn)(nil)
	_ driver.QueryerContext     = (*gatedConn)(nil)
	_ driver.ConnPrepareContext = (*gatedConn)(nil)
	_ driver.Pinger             = (*gatedConn)(nil)
	_ driver.StmtExecContext    = (*gatedStmt)(nil)
	_ driver.StmtQueryContext   = (*gatedStmt)(nil)
)
