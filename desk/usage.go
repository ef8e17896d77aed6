package desk

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/chart"
	"github.com/kairos-agent/kairos/usage"
)

// Usage is /usage: the user's tokens and cost today and this month with a
// chart of the last 30 days; an operator in a private chat also sees
// everyone's and may lift a cap (/usage lift ID, /usage lift bot).
type Usage struct {
	Store kairos.UsageStore
	Guard *usage.Guard
	Zone  usage.ZoneFunc
	// Picture sends a chart where the door can show one (false when it
	// cannot: the words say so).
	Picture func(ctx context.Context, png []byte, caption string) (bool, error)
	Policy  func() *kairos.Policy
	Now     func() time.Time
	Logger  *slog.Logger
}

// Command is /usage's entry of the table.
func (u *Usage) Command() Command {
	return Command{Name: "usage", Description: "Your tokens and cost today and this month, with a chart (operators: everyone, in a private chat; /usage lift ID)",
		Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
			return u.run(ctx, in, strings.Fields(args))
		}}
}

func (u *Usage) run(ctx context.Context, in *kairos.Inbound, args []string) (string, error) {
	operator := u.Policy().IsOperator(in.UserID)
	private := kairos.SurfaceOf(in).Private()
	if len(args) > 0 {
		if !private {
			return PrivateOnlyNote, nil // lifting a cap names another user
		}
		return u.lift(ctx, in, args, operator)
	}
	now := u.Now()
	zone := u.Zone(ctx, in.UserKey())
	if zone == nil {
		zone = time.UTC
	}
	own, err := usage.BuildReport(ctx, u.Store, zone, in.UserKey(), now)
	if err != nil {
		return "", err
	}
	text := own.Text("Your usage")
	if s, err := u.Guard.Status(ctx, in.UserKey()); err == nil && s != "" {
		text += s + "\n"
	}
	pic, title := own, "Your tokens per day, last 30 days ("+zone.String()+")"
	switch {
	case operator && !private:
		text += "\n(Everyone's spending: ask me in a private chat.)\n"
	case operator:
		all, err := usage.BuildReport(ctx, u.Store, time.UTC, "", now)
		if err != nil {
			return "", err
		}
		text += "\n" + all.Text("Everyone (the bot's total)") + u.usersText(ctx, now)
		pic, title = all, "Everyone's tokens per day, last 30 days (UTC)"
	}
	png, err := chart.Bars(title, "", pic.Labels, pic.Tokens)
	if err != nil {
		return "", err
	}
	sent, err := u.Picture(ctx, png, title)
	if err != nil {
		u.Logger.Warn("send usage chart", "err", err)
	} else if !sent {
		text += "\n(On Telegram this comes with a chart of the last 30 days.)"
	}
	return text, nil
}

// lift is /usage lift ID and /usage lift bot (operators).
func (u *Usage) lift(ctx context.Context, in *kairos.Inbound, args []string, operator bool) (string, error) {
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
	return u.Guard.Lift(ctx, who, in.UserKey())
}

// usersText lists this month's users (UTC month), most tokens first.
func (u *Usage) usersText(ctx context.Context, now time.Time) string {
	since := now.UTC().Format("2006-01") + "-01"
	days, err := usage.Days(ctx, u.Store, nil, "", since, now)
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
	for i, key := range order {
		if i == 20 {
			fmt.Fprintf(&b, "… and %d more (kairos usage lists all)\n", len(order)-20)
			break
		}
		fmt.Fprintf(&b, "- %s: %s\n", key, usage.Line(*per[key]))
	}
	return b.String()
}

// CodeChart sends /codestats' picture: the runs that succeeded and the
// failures by category, one bar each. Nothing when nothing ran.
func (u *Usage) CodeChart(ctx context.Context, st *kairos.CodeStats) {
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
		_, err = u.Picture(ctx, png, "Code runs, last 7 days")
	}
	if err != nil {
		u.Logger.Warn("send code stats chart", "err", err)
	}
}
