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
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// stmt returns the prepared statement of query (written with ?
// placeholders; PostgreSQL gets $n).
func (db *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if st, ok := db.stmts.m[query]; ok {
		return st, nil
	}
	q := query
	if db.dialect == DialectPostgres {
		q = dollarParams(query)
	}
	st, err := db.sqlDB.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if db.stmts.m == nil {
		db.stmts.m = map[string]*sql.Stmt{}
	}
	db.stmts.m[query] = st
	return st, nil
}

// closeStmts closes the cached statements (Close).
func (db *DB) closeStmts() {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	for _, st := range db.stmts.m {
		st.Close()
	}
	db.stmts.m = nil
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

// exec runs a prepared statement in the transaction.
func (t *hotTx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.db.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// queryRow runs a prepared query for one row in the transaction.
func (t *hotTx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.db.stmt(ctx, query)
	if err != nil {
		// A Row carrying the error: QueryRow on a closed statement
		// would panic, so run the unprepared query instead.
		return t.tx.QueryRowContext(ctx, t.db.rebind(query), args...)
	}
	return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
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

// queryRow runs a prepared query for one row outside a transaction.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := db.stmt(ctx, query)
	if err != nil {
		return db.sqlDB.QueryRowContext(ctx, db.rebind(query), args...)
	}
	return st.QueryRowContext(ctx, args...)
}
