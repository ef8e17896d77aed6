package usage

import (
	"context"
	"time"

	"github.com/kairos-agent/kairos"
)

// Today sums everyone's use today, each user's today in their own zone
// (the console's overview): the days of yesterday and today in UTC cover
// every zone, and a row counts when its day is today where its user is.
func Today(ctx context.Context, st kairos.UsageStore, zone ZoneFunc, now time.Time) (kairos.UsageTotals, error) {
	var t kairos.UsageTotals
	days, err := Days(ctx, st, zone, "", now.UTC().AddDate(0, 0, -1).Format(time.DateOnly), now)
	if err != nil {
		return t, err
	}
	for _, d := range days {
		if d.Day == now.In(zoneOf(ctx, zone, d.UserKey)).Format(time.DateOnly) {
			t.Add(d.UsageTotals)
		}
	}
	return t, nil
}
