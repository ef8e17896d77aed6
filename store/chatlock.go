package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/kairos-agent/kairos"
)

var _ kairos.ChatLocker = (*UpdateLog)(nil)

// chatLocks are in-process chat locks (SQLite: one process owns the file).
var chatLocks sync.Map // key string → *sync.Mutex

// LockChat holds the chat's lock. On PostgreSQL it is a session advisory
// lock on a dedicated connection, so every replica sharing the database
// sees it; on SQLite an in-process mutex.
func (l *UpdateLog) LockChat(ctx context.Context, chatID int64) (func(), error) {
	if l.db.dialect != DialectPostgres {
		v, _ := chatLocks.LoadOrStore(fmt.Sprintf("%p:%d", l.db, chatID), &sync.Mutex{})
		mu := v.(*sync.Mutex)
		mu.Lock()
		return mu.Unlock, nil
	}
	pool, err := l.db.lockPool()
	if err != nil {
		return nil, fmt.Errorf("lock chat: %w", err)
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock chat: %w", err)
	}
	// Two-key form: a namespace for chats, then the chat id folded to 32 bits.
	k1, k2 := int32(0x6b616972), int32(uint32(uint64(chatID)>>32)^uint32(uint64(chatID)))
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1, $2)", k1, k2); err != nil {
		conn.Close()
		return nil, fmt.Errorf("lock chat: %w", err)
	}
	return func() {
		conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1, $2)", k1, k2)
		conn.Close()
	}, nil
}

// PendingForChat returns the chat's unprocessed updates, oldest first.
func (l *UpdateLog) PendingForChat(ctx context.Context, chatID int64) ([]*kairos.RawUpdate, error) {
	var rows []updateRow
	if err := l.db.gdb.WithContext(ctx).Where("chat_id = ? AND status = ?", chatID, "pending").Order("update_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("pending updates of chat: %w", err)
	}
	return rawUpdates(rows), nil
}
