package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// The per-turn statements run through database/sql with statements
// prepared once on the database and reused in every transaction
// (Tx.StmtContext finds the one already prepared on the connection).
// gorm's PrepareStmt cannot do this for statements first seen inside a
// transaction: it caches the transaction's own statement, which is closed
// with it, so each later transaction prepares again.

// hotStmts caches prepared statements by query text.
type hotStmts struct {
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	closed  bool
	warming sync.WaitGroup
}

// cached returns the prepared statement of query, or nil.
func (db *DB) cached(query string) *sql.Stmt {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	return db.stmts.m[query]
}

// stmt returns the prepared statement of query (written with ?
// placeholders; PostgreSQL gets $n), preparing it on a connection of the
// pool. Never call it while holding a connection (inside a transaction):
// with every connection waiting for the write lock that transaction
// holds, it would wait for a free connection.
//
// A statement prepared twice is closed after stmts.mu is released:
// closing takes the lock of every connection it was prepared on, and
// database/sql holds a connection's lock while that connection waits in
// the write gate, so closing under stmts.mu would keep the gate's holder
// (who needs stmts.mu in cached) from finishing until the gate's bound.
func (db *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := db.cached(query); st != nil {
		return st, nil
	}
	st, err := db.sqlDB.PrepareContext(ctx, db.rebind(query))
	if err != nil {
		return nil, err
	}
	prev, err := db.keepStmt(query, st)
	if prev != st {
		st.Close()
	}
	return prev, err
}

// keepStmt caches st for query and returns it, or returns the statement
// cached meanwhile by another caller (nil and sql.ErrConnDone once the
// cache is closed).
func (db *DB) keepStmt(query string, st *sql.Stmt) (*sql.Stmt, error) {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if prev, ok := db.stmts.m[query]; ok {
		return prev, nil
	}
	if db.stmts.closed {
		return nil, sql.ErrConnDone
	}
	if db.stmts.m == nil {
		db.stmts.m = map[string]*sql.Stmt{}
	}
	db.stmts.m[query] = st
	return st, nil
}

// warm prepares query in the background (a transaction met it first and
// ran it unprepared on its own connection).
func (db *DB) warm(query string) {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if db.stmts.closed {
		return
	}
	db.stmts.warming.Add(1)
	go func() {
		defer db.stmts.warming.Done()
		_, _ = db.stmt(context.Background(), query)
	}()
}

// closeStmts closes the cached statements (Close).
func (db *DB) closeStmts() {
	db.stmts.mu.Lock()
	db.stmts.closed = true
	db.stmts.mu.Unlock()
	db.stmts.warming.Wait()
	db.stmts.mu.Lock()
	m := db.stmts.m
	db.stmts.m = nil
	db.stmts.mu.Unlock()
	for _, st := range m { // outside stmts.mu, as in stmt
		st.Close()
	}
}

// dollarParams turns ? placeholders into $1, $2, … (the hot statements
// have no ? inside literals).
func dollarParams(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// hotTx is one transaction of the hot path.
type hotTx struct {
	db *DB
	tx *sql.Tx
}

// exec runs a statement in the transaction: prepared when the cache has
// it (Tx.StmtContext reuses its preparation on this connection), else
// unprepared on the transaction's connection while the cache warms.
func (t *hotTx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.db.cached(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	t.db.warm(query)
	return t.tx.ExecContext(ctx, t.db.rebind(query), args...)
}

// queryRow runs a query for one row in the transaction (as exec).
func (t *hotTx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.db.cached(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	t.db.warm(query)
	return t.tx.QueryRowContext(ctx, t.db.rebind(query), args...)
}

func (db *DB) rebind(q string) string {
	if db.dialect == DialectPostgres {
		return dollarParams(q)
	}
	return q
}

// inTx runs f in one transaction of the hot path.
func (db *DB) inTx(ctx context.Context, f func(ctx context.Context, tx *hotTx) error) error {
	tx, err := db.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(ctx, &hotTx{db: db, tx: tx}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// execCount runs one statement in a transaction of its own (written at
// once, also under deferred writes) and returns the rows it affected.
func (db *DB) execCount(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *hotTx) error {
		res, err := tx.exec(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// queryRow runs a prepared query for one row outside a transaction.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := db.stmt(ctx, query)
	if err != nil {
		return db.sqlDB.QueryRowContext(ctx, db.rebind(query), args...)
	}
	return st.QueryRowContext(ctx, args...)
}
