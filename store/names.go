package store

import (
	"context"
	"fmt"
	"time"

	"github.com/kairos-agent/kairos"
)

var _ kairos.NameStore = (*Directory)(nil)

// NoteUserName stores what Telegram calls a user (one row per user, the
// latest names win).
func (d *Directory) NoteUserName(ctx context.Context, userKey string, n kairos.UserName, at time.Time) error {
	err := d.db.gdb.WithContext(ctx).Exec(`INSERT INTO user_names (user_key, first_name, username, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_key) DO UPDATE SET first_name = excluded.first_name, username = excluded.username, updated_at = excluded.updated_at`,
		userKey, n.FirstName, n.Username, ms(at)).Error
	if err != nil {
		return fmt.Errorf("note user name: %w", err)
	}
	return nil
}

// Names returns the names kept for the users (those without any are
// absent from the map).
func (d *Directory) Names(ctx context.Context, userKeys []string) (map[string]kairos.UserName, error) {
	out := map[string]kairos.UserName{}
	for len(userKeys) > 0 {
		batch := userKeys[:min(len(userKeys), 500)]
		userKeys = userKeys[len(batch):]
		var rows []struct {
			UserKey   string
			FirstName string
			Username  string
		}
		if err := d.db.gdb.WithContext(ctx).Raw(`SELECT user_key, first_name, username FROM user_names WHERE user_key IN ?`, batch).
			Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("user names: %w", err)
		}
		for _, r := range rows {
			out[r.UserKey] = kairos.UserName{FirstName: r.FirstName, Username: r.Username}
		}
	}
	return out, nil
}
