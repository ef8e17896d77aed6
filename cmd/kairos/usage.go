package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/usage"
	"github.com/kairos-agent/kairos/web"
)

// Cost accounting and spending caps (issue 24): the guard every model
// call goes through, /usage, and `kairos usage`.

func init() {
	register(Command{Name: "usage", Usage: "[--user ID] [--since YYYY-MM-DD]",
		Short: "tokens, cost and calls per user, model and day as JSON",
		Long: `Prints [{user_key, user_id, model, day, calls, prompt_tokens, cached_tokens, completion_tokens,
tokens, audio_seconds, images, cost_usd, unpriced_calls, estimated_calls}], days in each user's own zone
(YYYY-MM-DD), oldest first. cost_usd is null when no call of the row had a price (tokens
only). --since defaults to 30 days ago. Reads only: with no database yet it prints [].`,
		Flags: func(fs *flag.FlagSet) {
			fs.Int64("user", 0, "only this Telegram user id")
			fs.String("since", "", "first day (YYYY-MM-DD), default 30 days ago")
		},
		Config: true, Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.runUsage(ctx, inv.Int64("user"), inv.String("since"))
		}})
}

// userZone is the user's own zone: their DM's Session TZ, else their
// default, else UTC (what the session rollover resolves too).
func userZone(clocks *store.ClockStore, now func() time.Time) usage.ZoneFunc {
	return func(ctx context.Context, userKey string) *time.Location {
		channel, id, ok := strings.Cut(userKey, ":")
		uid, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			return nil
		}
		thread := kairos.ThreadKey(channel, kairos.ChatDM, uid, uid, 0)
		sessionTZ, defaultTZ, err := clocks.SessionZones(ctx, userKey, thread)
		if err != nil {
			return nil
		}
		loc, _ := clockstate.LoadTZ(clockstate.ResolveSessionTZ("", sessionTZ, defaultTZ, nil, now()).TZ)
		return loc
	}
}

// openUsage builds the guard and the model behind it.
func (c *core) openUsage(clocks *store.ClockStore) (*usage.Guard, kairos.Model) {
	g := usage.New(usage.Config{Store: store.NewUsageStore(c.db), Recorder: c.sessions, Policy: c.policy,
		Zone: userZone(clocks, c.now), Anchors: c.updates, Metrics: c.metrics, Now: c.now, Logger: c.log})
	return g, &usage.Model{Next: c.model, Guard: g}
}

// attachUsageNotices sends the guard's notices through the bot: a user's
// to their direct chat, the operators' to each operator.
func (c *core) attachUsageNotices(b *bot.Bot) {
	c.usage.Attach(func(ctx context.Context, userKey, text string) {
		channel, id, _ := strings.Cut(userKey, ":")
		uid, err := strconv.ParseInt(id, 10, 64)
		if channel != kairos.ChannelTelegram || err != nil {
			return
		}
		if err := b.Notify(context.WithoutCancel(ctx), uid, text); err != nil {
			c.log.Warn("spending notice", "err", err)
		}
	}, func(ctx context.Context, text string) {
		for _, id := range c.policy().Access.Operators {
			if err := b.Notify(context.WithoutCancel(ctx), id, text); err != nil {
				c.log.Warn("spending notice to operator", "err", err)
			}
		}
	})
}

// attachUsageTerminal prints the guard's notices on the terminal of
// `kairos chat` (its one user is the operator too).
func (c *core) attachUsageTerminal(w io.Writer) {
	var mu sync.Mutex
	say := func(text string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, "[usage] "+text)
	}
	c.usage.Attach(func(_ context.Context, _ string, text string) { say(text) }, func(_ context.Context, text string) { say(text) })
}

// usageDesk is /usage and /codestats' picture at the desk; pictures go
// through the bot where the door is Telegram's (bot.SendPhoto says false
// elsewhere).
func (c *core) usageDesk() *desk.Usage {
	return &desk.Usage{Store: store.NewUsageStore(c.db), Guard: c.usage, Zone: userZone(store.NewClockStore(c.db), c.now),
		Picture: bot.SendPhoto, Policy: c.policy, Now: c.now, Logger: c.log}
}

// runUsage is `kairos usage`.
func (m *Main) runUsage(ctx context.Context, user int64, since string) error {
	if since == "" {
		since = time.Now().UTC().AddDate(0, 0, -30).Format("2006-01-02")
	} else if _, err := time.Parse("2006-01-02", since); err != nil {
		return usagef("--since %q: want a date YYYY-MM-DD", since)
	}
	if m.saidNoDatabase() {
		_, err := fmt.Fprintln(m.Stdout, "[]")
		return err // no database yet: nothing used, nothing created
	}
	db, err := m.openStoreRO(ctx, m.logger())
	if err != nil {
		return err
	}
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	out, err := usageReport(ctx, db, user, since, now)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// usageReport is `kairos usage`'s lines (also the API's and the
// console's): per user, model and day in the user's zone since a date.
func usageReport(ctx context.Context, db *store.DB, user int64, since string, now time.Time) ([]web.UsageRow, error) {
	userKey := ""
	if user != 0 {
		userKey = kairos.UserKey(kairos.ChannelTelegram, user)
	}
	days, err := usage.Days(ctx, store.NewUsageStore(db), userZone(store.NewClockStore(db), func() time.Time { return now }), userKey, since, now)
	if err != nil {
		return nil, err
	}
	return web.UsageRows(days), nil
}
