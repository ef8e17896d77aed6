package jobs_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/jobs"
)

// A bot that was off from Wednesday night to Saturday writes the three
// missing dailies on its first tick, once, and later the weekly, monthly,
// quarterly and yearly summaries as their periods complete.
func TestRollupCatchesUpAfterDowntime(t *testing.T) {
	e := newEnv(t)
	u := e.user(1, "Asia/Tokyo")
	talkMondayToWednesday(t, e, u)

	// Back on Saturday noon: the first tick runs division then roll-up.
	back := time.Date(2026, 3, 7, 12, 0, 0, 0, u.loc)
	firstTickWritesTheMissingDailies(t, e, u, back)

	t.Run("idempotent under double runs", func(t *testing.T) { rollupAgainWritesNothing(t, e, u, back) })
	t.Run("weekly once the ISO week is over", func(t *testing.T) { weeklyOnceTheWeekIsOver(t, e, u) })
	t.Run("month, quarter and year", func(t *testing.T) { monthQuarterAndYear(t, e, u) })
}

// talkMondayToWednesday: Monday to Wednesday 2026-03-02..04, a
// conversation each day; the next day's first message rolls the session
// over (lazy), and Wednesday's session is still open when the bot goes
// down on Wednesday night. No roll-up has run yet.
func talkMondayToWednesday(t *testing.T, e *env, u user) {
	t.Helper()
	ss := e.sched.Sessions()
	for d := 2; d <= 4; d++ {
		at := time.Date(2026, 3, d, 20, 0, 0, 0, u.loc)
		if d > 2 {
			if _, err := ss.Rollover(context.Background(), inbound(u, at), e.open(u)); err != nil {
				t.Fatal(err)
			}
		}
		e.say(u, at, "day "+at.Format("Mon"))
	}
	if got := e.periodKeys(u, kairos.SummaryConversation); got != "2026-03-02,2026-03-03" {
		t.Fatalf("conversation summaries before the outage: %s", got)
	}
}

// firstTickWritesTheMissingDailies runs the first tick at back: division,
// then the roll-up writes the three dailies (Wednesday's from Wednesday's
// conversation only) and no weekly yet.
func firstTickWritesTheMissingDailies(t *testing.T, e *env, u user, back time.Time) {
	t.Helper()
	calls := e.model.Calls()
	runs := e.sched.RunDue(context.Background(), back)
	var names []string
	for _, r := range runs {
		names = append(names, r.Job+":"+r.Outcome)
	}
	if got := strings.Join(names, " "); got != "sessions.divide:ok summaries.rollup:ok job_runs.prune:ok" {
		t.Fatalf("first tick ran %s", got)
	}
	if got := e.periodKeys(u, kairos.SummaryDaily); got != "2026-03-02,2026-03-03,2026-03-04" {
		t.Fatalf("dailies %q, detail %q", got, runs[1].Detail)
	}
	if got := e.periodKeys(u, kairos.SummaryWeekly); got != "" {
		t.Fatalf("weekly before the week ended: %s", got)
	}
	// Wednesday's daily was built from Wednesday's conversation only.
	dailyReqs := requestsWith(e.model, "daily-summary for 2026-03-04")
	if len(dailyReqs) != 1 || !strings.Contains(dailyReqs[0].Messages[1].Content, "[conversation-summary 2026-03-04]") ||
		strings.Contains(dailyReqs[0].Messages[1].Content, "2026-03-03") {
		t.Fatalf("daily request %+v", dailyReqs)
	}
	written := e.model.Calls() - calls // Wednesday's conversation summary + 3 dailies
	if written != 4 {
		t.Fatalf("%d model calls on the first tick", written)
	}
}

// rollupAgainWritesNothing runs the roll-up again at back, twice in a row
// and three times at once: no model call, no duplicate daily.
func rollupAgainWritesNothing(t *testing.T, e *env, u user, back time.Time) {
	calls := e.model.Calls()
	for i := 0; i < 2; i++ {
		e.run(jobs.JobRollup, back.Add(time.Duration(i)*time.Minute))
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // three processes at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := jobsNew(e).RunJob(context.Background(), jobs.JobRollup, back); err != nil || r.Outcome != kairos.JobOK {
				t.Errorf("%+v %v", r, err)
			}
		}()
	}
	wg.Wait()
	if e.model.Calls() != calls {
		t.Fatalf("%d more model calls", e.model.Calls()-calls)
	}
	e.summaries(u, kairos.SummaryDaily) // fails on duplicates
}

// weeklyOnceTheWeekIsOver: no weekly on Sunday night; at Monday's
// midnight the weekly of 2026-W10, built from its three dailies.
func weeklyOnceTheWeekIsOver(t *testing.T, e *env, u user) {
	e.run(jobs.JobRollup, time.Date(2026, 3, 8, 23, 59, 0, 0, u.loc))
	if got := e.periodKeys(u, kairos.SummaryWeekly); got != "" {
		t.Fatalf("weekly on Sunday: %s", got)
	}
	e.run(jobs.JobRollup, time.Date(2026, 3, 9, 0, 0, 0, 0, u.loc))
	if got := e.periodKeys(u, kairos.SummaryWeekly); got != "2026-W10" {
		t.Fatalf("weeklies %s", got)
	}
	reqs := requestsWith(e.model, "weekly-summary for 2026-W10")
	if len(reqs) != 1 || strings.Count(reqs[0].Messages[1].Content, "[daily-summary ") != 3 {
		t.Fatalf("weekly request %+v", reqs)
	}
}

// monthQuarterAndYear: March's monthly and Q1's quarterly once April
// begins, and 2026's yearly (built from Q1) once 2027 begins.
func monthQuarterAndYear(t *testing.T, e *env, u user) {
	e.run(jobs.JobRollup, time.Date(2026, 3, 31, 23, 0, 0, 0, u.loc))
	if got := e.periodKeys(u, kairos.SummaryMonthly); got != "" {
		t.Fatalf("monthly before the month ended: %s", got)
	}
	e.run(jobs.JobRollup, time.Date(2026, 4, 1, 0, 5, 0, 0, u.loc))
	if got := e.periodKeys(u, kairos.SummaryMonthly) + " " + e.periodKeys(u, kairos.SummaryQuarterly); got != "2026-03 2026-Q1" {
		t.Fatalf("monthly and quarterly: %s", got)
	}
	e.run(jobs.JobRollup, time.Date(2027, 1, 1, 0, 5, 0, 0, u.loc))
	if got := e.periodKeys(u, kairos.SummaryYearly); got != "2026" {
		t.Fatalf("yearly: %s", got)
	}
	if reqs := requestsWith(e.model, "yearly-summary for 2026"); len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, "[quarterly-summary 2026-Q1]") {
		t.Fatalf("yearly request %+v", reqs)
	}
}

// A day is complete only when no open session still holds its messages:
// the roll-up waits for the division (or a lazy rollover) to summarize it.
func TestRollupWaitsForTheDaysSessions(t *testing.T) {
	e := newEnv(t)
	u := e.user(2, "America/Los_Angeles")
	// The previous session was ended by /newsession on Tuesday.
	e.say(u, time.Date(2026, 3, 3, 10, 0, 0, 0, u.loc), "tuesday")
	if _, err := e.sched.Sessions().End(context.Background(), u.thread, u.key, "", time.Date(2026, 3, 3, 11, 0, 0, 0, u.loc)); err != nil {
		t.Fatal(err)
	}
	e.say(u, time.Date(2026, 3, 4, 10, 0, 0, 0, u.loc), "wednesday")
	thursday := time.Date(2026, 3, 5, 9, 0, 0, 0, u.loc)
	e.run(jobs.JobRollup, thursday)
	if got := e.periodKeys(u, kairos.SummaryDaily); got != "2026-03-03" {
		t.Fatalf("dailies %q, want only Tuesday's", got)
	}
	e.run(jobs.JobDivide, thursday)
	e.run(jobs.JobRollup, thursday)
	if got := e.periodKeys(u, kairos.SummaryDaily); got != "2026-03-03,2026-03-04" {
		t.Fatalf("dailies %q", got)
	}
}

func TestRollupPerUserTimezone(t *testing.T) {
	e := newEnv(t)
	tokyo := e.user(1, "Asia/Tokyo")
	la := e.user(2, "America/Los_Angeles")
	for _, u := range []user{tokyo, la} {
		e.say(u, time.Date(2026, 3, 4, 12, 0, 0, 0, u.loc), "lunch")
		if _, err := e.sched.Sessions().End(context.Background(), u.thread, u.key, "", time.Date(2026, 3, 4, 13, 0, 0, 0, u.loc)); err != nil {
			t.Fatal(err)
		}
	}
	// Tokyo's 2026-03-04 ends at 15:00Z, Los Angeles' at 08:00Z next day.
	e.run(jobs.JobRollup, time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
	if a, b := e.periodKeys(tokyo, kairos.SummaryDaily), e.periodKeys(la, kairos.SummaryDaily); a != "2026-03-04" || b != "" {
		t.Fatalf("tokyo %q, la %q", a, b)
	}
	e.run(jobs.JobRollup, time.Date(2026, 3, 5, 7, 59, 0, 0, time.UTC))
	if b := e.periodKeys(la, kairos.SummaryDaily); b != "" {
		t.Fatalf("la %q before its midnight", b)
	}
	e.run(jobs.JobRollup, time.Date(2026, 3, 5, 8, 0, 0, 0, time.UTC))
	if b := e.periodKeys(la, kairos.SummaryDaily); b != "2026-03-04" {
		t.Fatalf("la %q", b)
	}
}

func TestRollupModelFailureRetriesNextRun(t *testing.T) {
	e := newEnv(t)
	u := e.user(1, "Asia/Tokyo")
	e.say(u, time.Date(2026, 3, 2, 12, 0, 0, 0, u.loc), "monday")
	if _, err := e.sched.Sessions().End(context.Background(), u.thread, u.key, "", time.Date(2026, 3, 2, 13, 0, 0, 0, u.loc)); err != nil {
		t.Fatal(err)
	}
	answerText(e.model, func(req kairos.ChatRequest) (string, error) {
		return "", &kairos.ProviderError{StatusCode: 503, Retryable: true, Message: "down"}
	})
	at := time.Date(2026, 3, 10, 0, 0, 0, 0, u.loc)
	r, _ := e.sched.RunJob(context.Background(), jobs.JobRollup, at)
	if r.Outcome != kairos.JobError || !strings.Contains(r.Detail, "daily-summary 2026-03-02") {
		t.Fatalf("run %+v", r)
	}
	if got := e.periodKeys(u, kairos.SummaryWeekly); got != "" {
		t.Fatalf("weekly written without its daily: %s", got)
	}
	answerText(e.model, nil)
	e.run(jobs.JobRollup, at)
	if got := e.periodKeys(u, kairos.SummaryDaily) + " " + e.periodKeys(u, kairos.SummaryWeekly); got != "2026-03-02 2026-W10" {
		t.Fatalf("after recovery: %s", got)
	}
}
