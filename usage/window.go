package usage

import (
	"context"
	"encoding/json"
	"time"
)

// The windows caps count in. A daily cap counts from midnight in the
// user's own zone, which the user sets; a zone change must not reopen a
// day that was spent in (hopping to a zone whose midnight has just passed
// would reset the cap). So a window, once a call was recorded in it, is
// anchored: it keeps its start and end whatever the zone says later, and
// the next window starts no earlier than its end, at the next midnight of
// the zone then in force that leaves it at least a short local day
// (minDay) long. Months work the same way with their first day's
// midnight. For a user who never changes zone the windows are exactly
// the calendar days and months of that zone.

// Shortest windows: a local day is at least 23 hours (the day clocks go
// forward), a local month at least 27 days and 23 hours.
const (
	minDay   = 23 * time.Hour
	minMonth = 27*24*time.Hour + 23*time.Hour
)

// window is one day or month a cap counts in.
type window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Key   string    `json:"key"`  // 2026-11-25 or 2026-11: the period key (lifts, notices)
	Zone  string    `json:"zone"` // the zone it was opened in (the reset shown to the user)
}

func (w window) zero() bool { return w.Start.IsZero() }

// holds reports whether w is the window of now.
func (w window) holds(now time.Time) bool {
	return !w.zero() && !now.Before(w.Start) && now.Before(w.End)
}

func (w window) loc() *time.Location {
	if loc, err := time.LoadLocation(w.Zone); err == nil && w.Zone != "" {
		return loc
	}
	return time.UTC
}

// periodKind is a day or a month: where its local boundaries fall.
type periodKind struct {
	min    time.Duration
	format string
	// floor is the boundary at or before t, in t's location.
	floor func(t time.Time) time.Time
	// next is the boundary after the boundary b.
	next func(b time.Time) time.Time
}

var (
	dayKind = periodKind{min: minDay, format: "2006-01-02",
		floor: func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location()) },
		next: func(b time.Time) time.Time {
			return time.Date(b.Year(), b.Month(), b.Day()+1, 0, 0, 0, 0, b.Location())
		}}
	monthKind = periodKind{min: minMonth, format: "2006-01",
		floor: func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location()) },
		next:  func(b time.Time) time.Time { return time.Date(b.Year(), b.Month()+1, 1, 0, 0, 0, 0, b.Location()) }}
)

// windowFor is the window of now in loc after prev, the last anchored
// window (zero when there is none): prev itself while it lasts; else the
// period of loc that holds now, started no earlier than prev's end, and
// ending at the first boundary of loc at least k.min after its start.
func windowFor(k periodKind, now time.Time, loc *time.Location, prev window) window {
	if prev.holds(now) {
		return prev
	}
	start := k.floor(now.In(loc))
	if !prev.zero() && prev.End.After(start) && !now.Before(prev.End) {
		start = prev.End.In(loc)
	}
	end := k.floor(start)
	for end.Sub(start) < k.min {
		end = k.next(end)
	}
	// A boundary that does not exist (a zone whose clocks skip midnight)
	// normalises to a later instant; the loop above already passed it.
	return window{Start: start, End: end, Key: start.Format(k.format), Zone: loc.String()}
}

// Anchors keeps the anchored windows of each account (the settings
// table), so that every replica and every restart counts in the same
// windows.
type Anchors interface {
	Setting(ctx context.Context, key string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
}

// anchored are an account's last anchored day and month.
type anchored struct {
	Day   window `json:"day"`
	Month window `json:"month"`
}

func anchorKey(acct string) string { return "spend_window:" + acct }

// loadAnchors reads acct's anchored windows (zero when none or unreadable).
func (g *Guard) loadAnchors(ctx context.Context, acct string) (anchored, error) {
	var an anchored
	if g.cfg.Anchors == nil {
		return an, nil
	}
	s, err := g.cfg.Anchors.Setting(ctx, anchorKey(acct))
	if err != nil || s == "" {
		return an, err
	}
	if json.Unmarshal([]byte(s), &an) != nil {
		return anchored{}, nil // a damaged value: the zone's calendar again
	}
	return an, nil
}

// saveAnchors writes acct's anchored windows.
func (g *Guard) saveAnchors(ctx context.Context, acct string, an anchored) error {
	if g.cfg.Anchors == nil {
		return nil
	}
	b, err := json.Marshal(an)
	if err != nil {
		return err
	}
	return g.cfg.Anchors.SetSetting(ctx, anchorKey(acct), string(b))
}
