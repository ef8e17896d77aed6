package jobs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/jobs"
)

func TestDailyRolloverAtEachUsersMidnight(t *testing.T) {
	e := newEnv(t)
	tokyo := e.user(1, "Asia/Tokyo")
	la := e.user(2, "America/Los_Angeles")
	// Both talk in the morning of 2026-03-04, local time.
	tokyoOld := e.say(tokyo, time.Date(2026, 3, 4, 9, 0, 0, 0, tokyo.loc), "tokyo morning")
	laOld := e.say(la, time.Date(2026, 3, 4, 9, 0, 0, 0, la.loc), "la morning")
	tokyoMidnight := time.Date(2026, 3, 5, 0, 0, 0, 0, tokyo.loc) // 2026-03-04T15:00Z
	laMidnight := time.Date(2026, 3, 5, 0, 0, 0, 0, la.loc)       // 2026-03-05T08:00Z

	steps := []struct {
		at                time.Time
		tokyoDone, laDone bool
		detail            string
	}{
		{tokyoMidnight.Add(-time.Minute), false, false, "rolled over 0 sessions"},
		{tokyoMidnight, true, false, "rolled over 1 sessions"},
		{laMidnight.Add(-time.Minute), true, false, "rolled over 0 sessions"},
		{laMidnight, true, true, "rolled over 1 sessions"},
		{laMidnight.Add(time.Minute), true, true, "rolled over 0 sessions"},
	}
	for _, st := range steps {
		r := e.run(jobs.JobDivide, st.at)
		if r.Detail != st.detail {
			t.Errorf("at %s: %q, want %q", st.at.UTC(), r.Detail, st.detail)
		}
		if got := e.find(tokyoOld.ID).EndedAt != nil; got != st.tokyoDone {
			t.Fatalf("at %s: tokyo ended=%v", st.at.UTC(), got)
		}
		if got := e.find(laOld.ID).EndedAt != nil; got != st.laDone {
			t.Fatalf("at %s: los angeles ended=%v", st.at.UTC(), got)
		}
	}
	for _, c := range []struct {
		u        user
		old      *kairos.Session
		midnight time.Time
		name     string
	}{{tokyo, tokyoOld, tokyoMidnight, "Thursday 2026-03-05"}, {la, laOld, laMidnight, "Thursday 2026-03-05"}} {
		old := e.find(c.old.ID)
		if !old.EndedAt.Equal(c.midnight) || old.Summary == "" {
			t.Errorf("%s: ended at %v with summary %q; want at its midnight %v", c.u.thread, old.EndedAt, old.Summary, c.midnight)
		}
		next := e.open(c.u)
		if next.PrevSessionID != old.ID || !next.StartedAt.Equal(c.midnight) || next.Name != c.name {
			t.Errorf("%s: next session %+v", c.u.thread, next)
		}
		conv := e.summaries(c.u, kairos.SummaryConversation)
		m := conv["2026-03-04/"+old.ID]
		if len(conv) != 1 || m == nil || m.Content != old.Summary {
			t.Errorf("%s: conversation summaries %v", c.u.thread, keys(conv))
		}
	}
}

func TestDivisionAcrossDST(t *testing.T) {
	for _, tc := range []struct {
		name     string
		said     time.Time // wall time in Los Angeles
		boundary string    // instant the session must end at
		at       string    // division time on the policy
	}{
		// 02:30 does not exist on 2026-03-08: the division is at 03:30 PDT.
		{"spring forward", time.Date(2026, 3, 7, 20, 0, 0, 0, time.UTC), "2026-03-08T10:30:00Z", "02:30"},
		// The day after: 02:30 PDT, 23 hours after the previous division.
		{"after spring forward", time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC), "2026-03-09T09:30:00Z", "02:30"},
		// 2026-11-01 falls back at 02:00 PDT; 02:30 PST is 25 hours after
		// the previous 02:30 PDT.
		{"fall back", time.Date(2026, 10, 31, 20, 0, 0, 0, time.UTC), "2026-11-01T10:30:00Z", "02:30"},
		// 01:30 happens twice: the first one (PDT) divides.
		{"fall back fold", time.Date(2026, 10, 31, 20, 0, 0, 0, time.UTC), "2026-11-01T08:30:00Z", "01:30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.setSessions(func(p *kairos.SessionsPolicy) { p.AutoDivideTime = tc.at })
			la := e.user(2, "America/Los_Angeles")
			said := time.Date(tc.said.Year(), tc.said.Month(), tc.said.Day(), tc.said.Hour(), 0, 0, 0, la.loc)
			old := e.say(la, said, "evening plans")
			boundary, _ := time.Parse(time.RFC3339, tc.boundary)
			// Every minute of the two hours before the boundary: nothing.
			for at := boundary.Add(-2 * time.Hour); at.Before(boundary); at = at.Add(time.Minute) {
				if r := e.run(jobs.JobDivide, at); r.Detail != "rolled over 0 sessions" {
					t.Fatalf("at %s (%s): %s", at.UTC(), at.In(la.loc), r.Detail)
				}
			}
			if r := e.run(jobs.JobDivide, boundary); r.Detail != "rolled over 1 sessions" {
				t.Fatalf("at the boundary %s: %s", boundary, r.Detail)
			}
			if got := e.find(old.ID); got.EndedAt == nil || !got.EndedAt.Equal(boundary) {
				t.Fatalf("ended at %v, want %s", got.EndedAt, boundary)
			}
			day := said.Format("2006-01-02")
			if conv := e.summaries(la, kairos.SummaryConversation); conv[day+"/"+old.ID] == nil {
				t.Fatalf("conversation summary keys %v, want %s", keys(conv), day)
			}
		})
	}
}

func TestWeeklyDivisionOnMondays(t *testing.T) {
	e := newEnv(t)
	e.setSessions(func(p *kairos.SessionsPolicy) { p.AutoDivide = "weekly"; p.AutoDivideTime = "00:00" })
	tokyo := e.user(1, "Asia/Tokyo")
	wed := time.Date(2026, 3, 11, 10, 0, 0, 0, tokyo.loc)
	old := e.say(tokyo, wed, "wednesday")
	e.say(tokyo, wed.AddDate(0, 0, 3), "saturday") // same session
	for d := 1; d <= 4; d++ {                      // Thu .. Sun midnights: no division
		at := time.Date(2026, 3, 11+d, 0, 0, 0, 0, tokyo.loc)
		if r := e.run(jobs.JobDivide, at); r.Detail != "rolled over 0 sessions" {
			t.Fatalf("%s: %s", at.Weekday(), r.Detail)
		}
	}
	monday := time.Date(2026, 3, 16, 0, 0, 0, 0, tokyo.loc)
	if r := e.run(jobs.JobDivide, monday); r.Detail != "rolled over 1 sessions" {
		t.Fatalf("monday: %s", r.Detail)
	}
	if got := e.find(old.ID); !got.EndedAt.Equal(monday) {
		t.Fatalf("ended at %v", got.EndedAt)
	}
	next := e.open(tokyo)
	if next.Name != "Week 2026-W12" || next.PrevSessionID != old.ID {
		t.Fatalf("next %+v", next)
	}
	// Weekly division files the conversation under the day it ended.
	if conv := e.summaries(tokyo, kairos.SummaryConversation); conv["2026-03-14/"+old.ID] == nil {
		t.Fatalf("conversation keys %v", keys(conv))
	}
}

func TestNoDivision(t *testing.T) {
	e := newEnv(t)
	e.setSessions(func(p *kairos.SessionsPolicy) { p.AutoDivide = "none" })
	u := e.user(1, "Asia/Tokyo")
	old := e.say(u, time.Date(2026, 3, 4, 9, 0, 0, 0, u.loc), "hello")
	e.run(jobs.JobDivide, time.Date(2026, 3, 9, 0, 0, 0, 0, u.loc))
	in := &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: u.id, ChatKind: kairos.ChatDM, UserID: u.id, Date: time.Date(2026, 3, 9, 1, 0, 0, 0, u.loc)}
	got, err := e.sched.Sessions().Rollover(context.Background(), in, old)
	if err != nil || got.ID != old.ID || e.find(old.ID).EndedAt != nil {
		t.Fatalf("divided with auto_divide none: %+v %v", got, err)
	}
}

func inbound(u user, at time.Time) *kairos.Inbound {
	return &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: u.id, ChatKind: kairos.ChatDM, UserID: u.id, UserName: "Ann",
		Text: "good morning", Date: at}
}

func TestLazyRollover(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	u := e.user(1, "Asia/Tokyo")
	mon := time.Date(2026, 3, 2, 21, 0, 0, 0, u.loc)
	old := e.say(u, mon, "I will call the dentist tomorrow")
	tue := time.Date(2026, 3, 3, 0, 0, 0, 0, u.loc)

	t.Run("before the boundary nothing happens", func(t *testing.T) {
		got, err := e.sched.Sessions().Rollover(ctx, inbound(u, tue.Add(-time.Second)), old)
		if err != nil || got.ID != old.ID || e.model.Calls() != 0 {
			t.Fatalf("got %s, %v, %d model calls", got.ID, err, e.model.Calls())
		}
	})
	t.Run("a message after the boundary gets the new session first", func(t *testing.T) {
		// The division job has not run; the message at 07:30 rolls over.
		got, err := e.sched.Sessions().Rollover(ctx, inbound(u, tue.Add(7*time.Hour+30*time.Minute)), old)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID == old.ID || got.PrevSessionID != old.ID || !got.StartedAt.Equal(tue) || got.EndedAt != nil {
			t.Fatalf("turn session %+v", got)
		}
		prev := e.find(old.ID)
		if prev.EndedAt == nil || !prev.EndedAt.Equal(tue) || !strings.HasPrefix(prev.Summary, "summary #1") {
			t.Fatalf("previous session %+v", prev)
		}
		reqs := requestsWith(e.model, "Summarize this conversation")
		if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, "call the dentist") || reqs[0].Model != "m1" || len(reqs[0].Tools) != 0 {
			t.Fatalf("summary requests %+v", reqs)
		}
	})
	t.Run("the job that runs late finds nothing to do", func(t *testing.T) {
		if r := e.run(jobs.JobDivide, tue.Add(8*time.Hour)); r.Detail != "rolled over 0 sessions" {
			t.Fatal(r.Detail)
		}
	})
	t.Run("a stale session value is re-read", func(t *testing.T) {
		// The agent opened `old` before another turn rolled it over.
		got, err := e.sched.Sessions().Rollover(ctx, inbound(u, tue.Add(9*time.Hour)), old)
		if err != nil || got.ID == old.ID || got.PrevSessionID != old.ID || e.model.Calls() != 1 {
			t.Fatalf("got %+v, %v, %d calls", got, err, e.model.Calls())
		}
	})
	t.Run("an empty session is not divided", func(t *testing.T) {
		cur := e.open(u)
		got, err := e.sched.Sessions().Rollover(ctx, inbound(u, tue.AddDate(0, 0, 5)), cur)
		if err != nil || got.ID != cur.ID || e.find(cur.ID).EndedAt != nil {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
}

func TestEnd(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	u := e.user(1, "America/Los_Angeles")
	at := time.Date(2026, 3, 4, 23, 50, 0, 0, u.loc)

	t.Run("empty session", func(t *testing.T) {
		name, err := e.sched.Sessions().End(ctx, u.thread, u.key, "", at)
		if err != nil || name != "Session 2026-03-04 23:50" {
			t.Fatalf("%q, %v", name, err)
		}
		if e.model.Calls() != 0 || len(e.summaries(u, kairos.SummaryConversation)) != 0 {
			t.Fatal("an empty session was summarized")
		}
		if e.open(u).Name != name {
			t.Fatalf("open session %+v", e.open(u))
		}
	})
	t.Run("with conversation", func(t *testing.T) {
		s := e.say(u, at.Add(time.Minute), "trip to Kyoto")
		name, err := e.sched.Sessions().End(ctx, u.thread, u.key, "Kyoto planning", at.Add(5*time.Minute))
		if err != nil || name != "Kyoto planning" {
			t.Fatalf("%q, %v", name, err)
		}
		ended := e.find(s.ID)
		conv := e.summaries(u, kairos.SummaryConversation)
		m := conv["2026-03-04/"+s.ID]
		if m == nil || m.Content != ended.Summary || m.ChatID != s.ID {
			t.Fatalf("conversation summaries %v, session %+v", keys(conv), ended)
		}
		if next := e.open(u); next.Name != "Kyoto planning" || next.PrevSessionID != s.ID {
			t.Fatalf("next %+v", next)
		}
	})
	t.Run("model down: an excerpt keeps the division", func(t *testing.T) {
		answerText(e.model, func(kairos.ChatRequest) (string, error) { return "", errors.New("503") })
		defer func() { answerText(e.model, nil) }()
		s := e.say(u, at.Add(time.Hour), "remember the umbrella")
		if _, err := e.sched.Sessions().End(ctx, u.thread, u.key, "", at.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		ended := e.find(s.ID)
		if !strings.Contains(ended.Summary, "Unsummarized excerpt") || !strings.Contains(ended.Summary, "umbrella") {
			t.Fatalf("summary %q", ended.Summary)
		}
	})
	t.Run("concurrent ends of one thread end one session each", func(t *testing.T) {
		e.say(u, at.Add(3*time.Hour), "x")
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.sched.Sessions().End(ctx, u.thread, u.key, "", at.Add(4*time.Hour)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		all, err := e.sessions.ListOpenSessions(ctx)
		if err != nil || len(all) != 1 {
			t.Fatalf("%d open sessions, %v", len(all), err)
		}
	})
}

// Two processes (two schedulers on one database) dividing at once end
// each session once and store one conversation summary.
func TestDivideTwiceConcurrently(t *testing.T) {
	e := newEnv(t)
	other := jobsNew(e)
	u := e.user(1, "Asia/Tokyo")
	old := e.say(u, time.Date(2026, 3, 4, 9, 0, 0, 0, u.loc), "hi")
	at := time.Date(2026, 3, 5, 0, 0, 0, 0, u.loc)
	var wg sync.WaitGroup
	for _, s := range []*jobs.Scheduler{e.sched, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := s.RunJob(context.Background(), jobs.JobDivide, at); err != nil || r.Outcome != kairos.JobOK {
				t.Errorf("%+v %v", r, err)
			}
		}()
	}
	wg.Wait()
	open, _ := e.sessions.ListOpenSessions(context.Background())
	if len(open) != 1 || open[0].PrevSessionID != old.ID {
		t.Fatalf("open sessions %+v", open)
	}
	if conv := e.summaries(u, kairos.SummaryConversation); len(conv) != 1 {
		t.Fatalf("conversation summaries %v", keys(conv))
	}
}

func jobsNew(e *env) *jobs.Scheduler { return jobs.New(e.cfg) }
