package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
)

// rollLevel is one roll-up: summaries of typ written from those of src.
type rollLevel struct {
	typ, src string
	words    int
}

// rollLevels in the order they are written. Months are built from the
// dailies (ISO weeks straddle months), quarters from months, years from
// quarters.
var rollLevels = []rollLevel{
	{kairos.SummaryDaily, kairos.SummaryConversation, 200},
	{kairos.SummaryWeekly, kairos.SummaryDaily, 250},
	{kairos.SummaryMonthly, kairos.SummaryDaily, 300},
	{kairos.SummaryQuarterly, kairos.SummaryMonthly, 300},
	{kairos.SummaryYearly, kairos.SummaryQuarterly, 350},
}

// recallCap is the store's largest recall page; a full page means more
// may exist and the sources are read period by period.
const recallCap = 100

// RollupResult tells what a roll-up run wrote.
type RollupResult struct {
	Users   int
	Written map[string][]string // summary type → period keys, per run
}

func (r *RollupResult) String() string {
	var parts []string
	for _, l := range rollLevels {
		if keys := r.Written[l.typ]; len(keys) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", l.typ, strings.Join(keys, ",")))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d users, nothing to write", r.Users)
	}
	return fmt.Sprintf("%d users; wrote %s", r.Users, strings.Join(parts, "; "))
}

// userThreads is what the roll-up knows of a user: their open sessions.
type userThreads struct {
	key  string
	open []*kairos.Session
}

// Rollup writes the missing calendar summaries of every user with a
// thread, in each user's Session TZ (their DM thread's, else their first
// thread's): dailies from the day's conversation summaries, ISO weeklies
// from dailies, monthlies from dailies, quarterlies from monthlies,
// yearlies from quarterlies. A period is written once it is complete: it
// has ended, and (unless auto_divide is none) no open session of the user
// holds messages from before its end, so the summary its session will get
// is not missed. Periods that already have their summary are skipped
// (StoreMemory would merge anyway), periods without sources are skipped,
// and the look-back reaches the previous month (quarter, year), so a bot
// that was down for days catches up on its next run.
func (s *Sessions) Rollup(ctx context.Context, now time.Time) (*RollupResult, error) {
	res := &RollupResult{Written: map[string][]string{}}
	div, derr := ParseDivision(s.cfg.Policy().Sessions)
	open, err := s.cfg.Sessions.ListOpenSessions(ctx)
	if err != nil {
		return res, err
	}
	var users []*userThreads
	byKey := map[string]*userThreads{}
	for _, sess := range open {
		if sess.UserKey == "" {
			continue
		}
		u := byKey[sess.UserKey]
		if u == nil {
			u = &userThreads{key: sess.UserKey}
			byKey[sess.UserKey] = u
			users = append(users, u)
		}
		u.open = append(u.open, sess)
	}
	res.Users = len(users)
	var errs []error
	for _, u := range users {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		err := s.rollupUser(ctx, u, now, derr == nil && div.Kind != DivideNone, res)
		if _, capped := kairos.AsSpendRefusal(err); capped {
			// Not a fault: the user's roll-ups wait for the cap to reset
			// (the next run writes what is missing).
			s.cfg.Logger.Info("roll-ups wait: a spending cap refused the summary", "user", u.key)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.key, err))
		}
	}
	return res, errors.Join(errs...)
}

func (s *Sessions) rollupUser(ctx context.Context, u *userThreads, now time.Time, divided bool, res *RollupResult) error {
	thread := u.open[0].ThreadKey
	for _, sess := range u.open {
		if strings.Contains(sess.ThreadKey, ":"+kairos.ChatDM+":") {
			thread = sess.ThreadKey
			break
		}
	}
	loc := s.cfg.location(ctx, thread, u.key)
	// completeBy: the earliest first message of an open session; periods
	// ending after it still wait for that session's summary.
	completeBy := now
	if divided {
		for _, sess := range u.open {
			first, err := s.cfg.Sessions.Messages(ctx, sess.ID, 0, 1)
			if err != nil {
				return err
			}
			if len(first) > 0 && first[0].CreatedAt.Before(completeBy) {
				completeBy = first[0].CreatedAt
			}
		}
	}
	for _, l := range rollLevels {
		if err := s.rollupLevel(ctx, u.key, l, loc, now, completeBy, res); err != nil {
			// Higher levels wait: they would miss what failed here.
			return fmt.Errorf("%s: %w", l.typ, err)
		}
	}
	return nil
}

// lookback returns where the roll-up of typ starts looking: the previous
// month for days, weeks and months, the previous quarter or year above.
func lookback(typ string, now time.Time, loc *time.Location) time.Time {
	l := now.In(loc)
	y, m, _ := l.Date()
	switch typ {
	case kairos.SummaryQuarterly:
		q := (int(m) - 1) / 3
		return time.Date(y, time.Month(3*q+1), 1, 0, 0, 0, 0, loc).AddDate(0, -3, 0)
	case kairos.SummaryYearly:
		return time.Date(y-1, 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, loc).AddDate(0, -1, 0)
}

// periodOf returns the period key of typ that holds the period key src.
func periodOf(typ, src string, loc *time.Location) (string, bool) {
	start, _, err := calendar.PeriodRange(src, loc)
	if err != nil {
		return "", false
	}
	return calendar.PeriodKey(typ, start), true
}

func (s *Sessions) recall(ctx context.Context, user, typ string, from time.Time, to *time.Time, prefix string) ([]*kairos.Memory, error) {
	return s.cfg.Memories.RecallMemories(ctx, kairos.MemoryFilter{UserKey: user, Store: kairos.StoreSummaries,
		SummaryTypes: []string{typ}, From: &from, To: to, PeriodKeyPrefix: prefix, Limit: recallCap})
}

func (s *Sessions) rollupLevel(ctx context.Context, user string, l rollLevel, loc *time.Location, now, completeBy time.Time, res *RollupResult) error {
	from := lookback(l.typ, now, loc)
	have := map[string]bool{}
	existing, err := s.recall(ctx, user, l.typ, from, nil, "")
	if err != nil {
		return err
	}
	for _, m := range existing {
		have[m.PeriodKey] = true
	}
	srcs, err := s.recall(ctx, user, l.src, from, nil, "")
	if err != nil {
		return err
	}
	truncated := len(srcs) >= recallCap
	grouped := map[string][]*kairos.Memory{}
	for _, m := range srcs {
		if k, ok := periodOf(l.typ, m.PeriodKey, loc); ok {
			grouped[k] = append(grouped[k], m)
		}
	}
	// Walk the complete periods from the look-back on.
	for start := from; ; {
		key := calendar.PeriodKey(l.typ, start)
		pstart, pend, err := calendar.PeriodRange(key, loc)
		if err != nil {
			return err
		}
		if pend.After(now) || pend.After(completeBy) {
			break
		}
		start = pend
		if pstart.Before(from) || have[key] {
			continue // a week that began before the look-back, or done
		}
		group := grouped[key]
		if truncated {
			last := pend.Add(-time.Millisecond)
			all, err := s.recall(ctx, user, l.src, pstart, &last, "")
			if err != nil {
				return err
			}
			group = group[:0:0]
			for _, m := range all {
				if k, ok := periodOf(l.typ, m.PeriodKey, loc); ok && k == key {
					group = append(group, m)
				}
			}
		}
		if len(group) == 0 {
			continue
		}
		if err := s.writeRollup(ctx, user, l, key, group, loc, now); err != nil {
			return err
		}
		res.Written[l.typ] = append(res.Written[l.typ], key)
	}
	return nil
}

func (s *Sessions) writeRollup(ctx context.Context, user string, l rollLevel, key string, group []*kairos.Memory, loc *time.Location, now time.Time) error {
	sort.SliceStable(group, func(i, j int) bool {
		if group[i].PeriodKey != group[j].PeriodKey {
			return group[i].PeriodKey < group[j].PeriodKey
		}
		return group[i].CreatedAt.Before(group[j].CreatedAt)
	})
	var b strings.Builder
	for _, m := range group {
		fmt.Fprintf(&b, "[%s %s]\n%s\n\n", m.Type, m.PeriodKey, strings.TrimSpace(m.Content))
	}
	system := fmt.Sprintf("You write the %s for %s (%s) of one person's conversations with you, from the summaries below. "+
		"Keep facts learned, decisions, commitments, open loops and dates; drop small talk. At most %d words. Reply with the summary only.",
		l.typ, key, loc.String(), l.words)
	text, err := s.cfg.chat(kairos.WithSpend(ctx, kairos.SpendContext{UserKey: user, Kind: kairos.SpendSummary}), system, b.String(), 2*l.words)
	if err != nil {
		return fmt.Errorf("%s %s: %w", l.typ, key, err)
	}
	at := now.In(loc)
	// A roll-up of any untrusted summary is untrusted.
	tainted := slices.ContainsFunc(group, func(m *kairos.Memory) bool { return m.Tainted })
	src := ""
	if tainted {
		src = "summaries of conversations that held untrusted content"
	}
	_, _, err = s.cfg.Memories.StoreMemory(ctx, &kairos.Memory{UserKey: user, Store: kairos.StoreSummaries, Type: l.typ,
		Content: text, PeriodKey: key, Tainted: tainted, TaintSource: src, CreatedAt: at, UpdatedAt: at})
	if err != nil {
		return fmt.Errorf("store %s %s: %w", l.typ, key, err)
	}
	s.cfg.Logger.Info("summary written", "user", user, "type", l.typ, "period", key, "sources", len(group))
	return nil
}
