package usage

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// ZoneFunc is a user's own zone (nil: UTC).
type ZoneFunc func(ctx context.Context, userKey string) *time.Location

func zoneOf(ctx context.Context, zone ZoneFunc, userKey string) *time.Location {
	if zone != nil {
		if z := zone(ctx, userKey); z != nil {
			return z
		}
	}
	return time.UTC
}

// Days sums usage by user, model and day of each user's own zone, for the
// days from sinceDay (YYYY-MM-DD; "" for the last 400 days) up to now;
// userKey "" is everyone. Rows are ordered by user, day and model.
func Days(ctx context.Context, st kairos.UsageStore, zone ZoneFunc, userKey, sinceDay string, now time.Time) ([]kairos.UsageDay, error) {
	from := now.AddDate(0, 0, -400)
	if sinceDay != "" {
		d, err := time.Parse("2006-01-02", sinceDay)
		if err != nil {
			return nil, kairos.Errorf(kairos.EINVALID, "%q is not a date YYYY-MM-DD", sinceDay)
		}
		from = d
	}
	// Zones lie within 14 hours of UTC: read wide, keep the days wanted.
	buckets, err := st.UsageBuckets(ctx, userKey, from.Add(-14*time.Hour), now.Add(time.Hour))
	if err != nil {
		return nil, err
	}
	zones := map[string]*time.Location{}
	type key struct{ user, day, model string }
	sums := map[key]*kairos.UsageDay{}
	for _, b := range buckets {
		loc, ok := zones[b.UserKey]
		if !ok {
			loc = zoneOf(ctx, zone, b.UserKey)
			zones[b.UserKey] = loc
		}
		day := b.Start.In(loc).Format("2006-01-02")
		if sinceDay != "" && day < sinceDay {
			continue
		}
		k := key{b.UserKey, day, b.Model}
		d := sums[k]
		if d == nil {
			d = &kairos.UsageDay{UserKey: b.UserKey, Model: b.Model, Day: day}
			sums[k] = d
		}
		d.UsageTotals.Add(b.UsageTotals)
	}
	out := make([]kairos.UsageDay, 0, len(sums))
	for _, d := range sums {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.UserKey != b.UserKey {
			return a.UserKey < b.UserKey
		}
		if a.Day != b.Day {
			return a.Day < b.Day
		}
		return a.Model < b.Model
	})
	return out, nil
}

// Report is what /usage shows one user: today, this month, this month by
// model, and the tokens of each of the last ChartDays days (oldest
// first) for the chart, in the user's own zone.
type Report struct {
	Zone    *time.Location
	Today   kairos.UsageTotals
	Month   kairos.UsageTotals
	ByModel []kairos.UsageDay // Day holds the month (YYYY-MM)
	Labels  []string          // the chart's days ("25")
	Tokens  []float64         // tokens per day
}

// ChartDays is how many days the /usage chart shows.
const ChartDays = 30

// BuildReport reads userKey's report ("" for everyone together, in loc).
func BuildReport(ctx context.Context, st kairos.UsageStore, loc *time.Location, userKey string, now time.Time) (*Report, error) {
	l := now.In(loc)
	first := time.Date(l.Year(), l.Month(), l.Day()-(ChartDays-1), 0, 0, 0, 0, loc)
	monthStart := time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
	start := first
	if monthStart.Before(start) {
		start = monthStart
	}
	same := func(context.Context, string) *time.Location { return loc }
	days, err := Days(ctx, st, same, userKey, start.Format("2006-01-02"), now)
	if err != nil {
		return nil, err
	}
	r := &Report{Zone: loc}
	today, month := l.Format("2006-01-02"), l.Format("2006-01")
	perDay := map[string]float64{}
	models := map[string]*kairos.UsageDay{}
	for _, d := range days {
		if d.Day == today {
			r.Today.Add(d.UsageTotals)
		}
		if strings.HasPrefix(d.Day, month) {
			r.Month.Add(d.UsageTotals)
			m := models[d.Model]
			if m == nil {
				m = &kairos.UsageDay{Model: d.Model, Day: month, UserKey: userKey}
				models[d.Model] = m
			}
			m.UsageTotals.Add(d.UsageTotals)
		}
		perDay[d.Day] += float64(d.Tokens())
	}
	for _, m := range models {
		r.ByModel = append(r.ByModel, *m)
	}
	sort.Slice(r.ByModel, func(i, j int) bool { return r.ByModel[i].Tokens() > r.ByModel[j].Tokens() })
	for i := range ChartDays {
		d := first.AddDate(0, 0, i)
		r.Labels = append(r.Labels, d.Format("2"))
		r.Tokens = append(r.Tokens, perDay[d.Format("2006-01-02")])
	}
	return r, nil
}

// Line writes totals in one line: tokens, cost, calls.
func Line(t kairos.UsageTotals) string {
	var b strings.Builder
	b.WriteString(Thousands(t.Tokens()) + " tokens")
	if t.AudioSeconds > 0 {
		fmt.Fprintf(&b, ", %s of audio", Span(time.Duration(t.AudioSeconds*float64(time.Second))))
	}
	switch {
	case t.Calls == 0:
	case t.UnpricedCalls == t.Calls:
		b.WriteString(", no price known (tokens only)")
	case t.UnpricedCalls > 0:
		fmt.Fprintf(&b, ", %s (%d call(s) of unpriced models not in it)", USD(t.CostUSD), t.UnpricedCalls)
	default:
		b.WriteString(", " + USD(t.CostUSD))
	}
	fmt.Fprintf(&b, " in %d call(s)", t.Calls)
	if t.EstimatedCalls > 0 {
		fmt.Fprintf(&b, " (%d with estimated counts: the provider reported none)", t.EstimatedCalls)
	}
	return b.String()
}

// Text writes the report for a chat message.
func (r *Report) Text(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s):\nToday: %s\nThis month: %s\n", title, r.Zone, Line(r.Today), Line(r.Month))
	if len(r.ByModel) > 0 {
		b.WriteString("By model this month:\n")
		for _, m := range r.ByModel {
			fmt.Fprintf(&b, "- %s: %s\n", m.Model, Line(m.UsageTotals))
		}
	}
	return b.String()
}
