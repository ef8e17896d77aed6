package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/internal/chart"
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

// addUsageCommands adds /usage.
func (m *Main) addUsageCommands(c *core, t *desk.Table) {
	t.Add(desk.Command{Name: "usage", Description: "Your tokens and cost today and this month, with a chart (operators: everyone, in a private chat; /usage lift ID)",
		Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
			return m.usageCommand(ctx, c, in, strings.Fields(args))
		}})
}

// usageCommand is /usage, /usage lift ID and /usage lift bot.
func (m *Main) usageCommand(ctx context.Context, c *core, in *kairos.Inbound, args []string) (string, error) {
	operator := c.policy().IsOperator(in.UserID)
	private := kairos.SurfaceOf(in).Private()
	if len(args) > 0 && !private {
		return desk.PrivateOnlyNote, nil // lifting a cap names another user
	}
	if len(args) > 0 {
		if args[0] != "lift" || len(args) != 2 {
			return "", kairos.Errorf(kairos.EINVALID, "Usage: /usage, or (operators) /usage lift ID or /usage lift bot.")
		}
		if !operator {
			return "", kairos.Errorf(kairos.EFORBIDDEN, "Only an operator can lift a cap.")
		}
		who := usage.BotKey
		if args[1] != "bot" {
			id, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || id <= 0 {
				return "", kairos.Errorf(kairos.EINVALID, "%q is not a Telegram user id. Usage: /usage lift ID or /usage lift bot.", args[1])
			}
			who = kairos.UserKey(kairos.ChannelTelegram, id)
		}
		return c.usage.Lift(ctx, who, in.UserKey())
	}
	st := store.NewUsageStore(c.db)
	now := c.now()
	zone := userZone(store.NewClockStore(c.db), c.now)(ctx, in.UserKey())
	if zone == nil {
		zone = time.UTC
	}
	own, err := usage.BuildReport(ctx, st, zone, in.UserKey(), now)
	if err != nil {
		return "", err
	}
	text := own.Text("Your usage")
	if s, err := c.usage.Status(ctx, in.UserKey()); err == nil && s != "" {
		text += s + "\n"
	}
	pic, title := own, "Your tokens per day, last 30 days ("+zone.String()+")"
	if operator && !private {
		text += "\n(Everyone's spending: ask me in a private chat.)\n"
	}
	if operator && private {
		all, err := usage.BuildReport(ctx, st, time.UTC, "", now)
		if err != nil {
			return "", err
		}
		text += "\n" + all.Text("Everyone (the bot's total)") + usersText(ctx, c, st, now)
		pic, title = all, "Everyone's tokens per day, last 30 days (UTC)"
	}
	png, err := chart.Bars(title, "", pic.Labels, pic.Tokens)
	if err != nil {
		return "", err
	}
	sent, err := bot.SendPhoto(ctx, png, title)
	if err != nil {
		c.log.Warn("send usage chart", "err", err)
	} else if !sent {
		text += "\n(On Telegram this comes with a chart of the last 30 days.)"
	}
	return text, nil
}

// usersText lists this month's users (UTC month), most tokens first.
func usersText(ctx context.Context, c *core, st kairos.UsageStore, now time.Time) string {
	since := now.UTC().Format("2006-01") + "-01"
	days, err := usage.Days(ctx, st, nil, "", since, now)
	if err != nil || len(days) == 0 {
		return ""
	}
	per := map[string]*kairos.UsageTotals{}
	var order []string
	for _, d := range days {
		if per[d.UserKey] == nil {
			per[d.UserKey] = &kairos.UsageTotals{}
			order = append(order, d.UserKey)
		}
		per[d.UserKey].Add(d.UsageTotals)
	}
	var b strings.Builder
	b.WriteString("By user this month (UTC):\n")
	for i, u := range order {
		if i == 20 {
			fmt.Fprintf(&b, "… and %d more (kairos usage lists all)\n", len(order)-20)
			break
		}
		fmt.Fprintf(&b, "- %s: %s\n", u, usage.Line(*per[u]))
	}
	return b.String()
}

// runUsage is `kairos usage`.
func (m *Main) runUsage(ctx context.Context, user int64, since string) error {
	if since == "" {
		since = time.Now().UTC().AddDate(0, 0, -30).Format("2006-01-02")
	} else if _, err := time.Parse("2006-01-02", since); err != nil {
		return usagef("--since %q: want a date YYYY-MM-DD", since)
	}
	if m.Config.DatabaseURL == "" {
		if _, err := os.Stat(filepath.Join(m.Config.DataDir, "kairos.db")); os.IsNotExist(err) {
			_, err := fmt.Fprintln(m.Stdout, "[]")
			return err // no database yet: nothing used, nothing created
		}
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

// codeStatsChart sends /codestats' picture: the runs that succeeded and
// the failures by category, one bar each (a chart reads better than the
// list once there are a few categories). Nothing when nothing ran.
func codeStatsChart(ctx context.Context, c *core, st *kairos.CodeStats) {
	if st == nil || st.Total == 0 {
		return
	}
	labels, values := []string{"succeeded"}, []float64{float64(st.Successes)}
	for _, cat := range st.Categories {
		labels = append(labels, cat.Category)
		values = append(values, float64(cat.Count))
	}
	png, err := chart.Bars("Code runs, last 7 days: succeeded, and failures by category", "", labels, values)
	if err == nil {
		_, err = bot.SendPhoto(ctx, png, "Code runs, last 7 days")
	}
	if err != nil {
		c.log.Warn("send code stats chart", "err", err)
	}
}
