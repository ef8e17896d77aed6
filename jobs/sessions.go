package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
)

// Sessions ends sessions: on /newsession, on the memory tool's
// __NEW_SESSION__, at the automatic division (Divide) and lazily before a
// turn (Rollover). Ending a session is serialised per thread.
type Sessions struct {
	cfg   *Config
	locks sync.Map // thread key → *sync.Mutex
}

// NewSessions returns the session service of cfg (New builds one too;
// use Scheduler.Sessions to share it).
func NewSessions(cfg Config) *Sessions {
	cfg.defaults()
	return &Sessions{cfg: &cfg}
}

func (s *Sessions) lock(threadKey string) func() {
	mu, _ := s.locks.LoadOrStore(threadKey, &sync.Mutex{})
	m := mu.(*sync.Mutex)
	m.Lock()
	return m.Unlock
}

// End ends the thread's open session at `at` and opens the next one, named
// name (default "Session YYYY-MM-DD HH:MM" in the thread's Session TZ).
// A session with conversation gets its conversation summary written by the
// model (an excerpt when no model answers), stored on the session and as
// a conversation-summary memory of userKey (the session's user when
// empty) with the period key of the day it happened in the Session TZ
// (see conversationDay) and chat_id = the session id. It returns the new session's
// name.
func (s *Sessions) End(ctx context.Context, threadKey, userKey, name string, at time.Time) (string, error) {
	defer s.lock(threadKey)()
	sess, err := s.cfg.Sessions.OpenSession(ctx, threadKey, userKey, at)
	if err != nil {
		return "", fmt.Errorf("end session: %w", err)
	}
	loc := s.cfg.location(ctx, threadKey, userKey)
	if name == "" {
		name = "Session " + at.In(loc).Format("2006-01-02 15:04")
	}
	if userKey == "" {
		userKey = sess.UserKey
	}
	if _, err := s.end(ctx, sess, userKey, name, at, loc); err != nil {
		return "", err
	}
	return name, nil
}

// end summarizes and ends sess; the caller holds the thread's lock.
func (s *Sessions) end(ctx context.Context, sess *kairos.Session, userKey, name string, at time.Time, loc *time.Location) (*kairos.Session, error) {
	msgs, err := s.cfg.Sessions.Messages(ctx, sess.ID, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("end session: %w", err)
	}
	summary := ""
	if hasConversation(msgs) || sess.RunningSummary != "" {
		text := transcript(sess, msgs)
		// Counted against the session's user as a summary, and refused at
		// a cap like any call: the excerpt keeps the session then.
		sctx := kairos.WithSpend(ctx, kairos.SpendContext{UserKey: sess.UserKey, ThreadKey: sess.ThreadKey, SessionID: sess.ID, Kind: kairos.SpendSummary})
		summary, err = s.cfg.chat(sctx, sessionPrompt, text, 400)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			why := "the model was unavailable"
			if _, capped := kairos.AsSpendRefusal(err); capped {
				why = "a spending cap was reached"
				s.cfg.Logger.Info("session summary refused by a spending cap; storing an excerpt", "session", sess.ID)
			} else {
				s.cfg.Logger.Warn("session summary unavailable; storing an excerpt", "session", sess.ID, "err", err)
			}
			summary = excerpt(text, why)
		}
		day := conversationDay(s.cfg.Policy().Sessions, sess, msgs)
		if userKey == "" {
			userKey = sess.UserKey
		}
		// A summary of a conversation that held untrusted content is
		// untrusted too (the injection may live on in it).
		tainted := sess.Tainted || slices.ContainsFunc(msgs, func(m *kairos.Message) bool { return m.Tainted })
		src := ""
		if tainted {
			src = "a conversation that held untrusted content"
		}
		_, _, err = s.cfg.Memories.StoreMemory(ctx, &kairos.Memory{UserKey: userKey, Store: kairos.StoreSummaries,
			Type: kairos.SummaryConversation, Content: summary, ChatID: sess.ID,
			PeriodKey: calendar.PeriodKey(kairos.SummaryConversation, day.In(loc)),
			Tainted:   tainted, TaintSource: src, CreatedAt: at.In(loc), UpdatedAt: at.In(loc)})
		if err != nil {
			return nil, fmt.Errorf("store conversation summary: %w", err)
		}
	}
	next, err := s.cfg.Sessions.EndSession(ctx, sess.ID, summary, at, name)
	if err != nil {
		return nil, fmt.Errorf("end session: %w", err)
	}
	s.cfg.Logger.Info("session ended", "thread", sess.ThreadKey, "session", sess.ID, "next", next.ID, "messages", len(msgs))
	return next, nil
}

// conversationDay is the instant whose local day keys a session's
// conversation summary: its first message under daily division (a night
// that runs past midnight before a 04:00 division stays with its evening),
// its last message otherwise (a long stretch is filed on the day it ended,
// which the roll-ups have not reached yet).
func conversationDay(p kairos.SessionsPolicy, sess *kairos.Session, msgs []*kairos.Message) time.Time {
	if len(msgs) == 0 {
		return sess.StartedAt
	}
	if div, err := ParseDivision(p); err == nil && div.Kind == DivideDaily {
		return msgs[0].CreatedAt
	}
	return msgs[len(msgs)-1].CreatedAt
}

// Rollover is agent.Config.Rollover (lazy rollover): before a turn, when
// the automatic division has a boundary (in the thread's Session TZ)
// between the session's first message and the message's own date, it ends
// the session at that boundary and returns the new one, which carries the
// previous summary through PrevSessionID. Otherwise it returns s
// unchanged. So correctness never depends on the division job having run.
func (s *Sessions) Rollover(ctx context.Context, in *kairos.Inbound, sess *kairos.Session) (*kairos.Session, error) {
	div, err := ParseDivision(s.cfg.Policy().Sessions)
	if err != nil || div.Kind == DivideNone {
		return sess, nil
	}
	loc := s.cfg.location(ctx, in.ThreadKey(), in.UserKey())
	b := div.Boundary(in.Date, loc)
	if !b.After(sess.StartedAt) {
		return sess, nil // cheap path: no boundary since the session began
	}
	defer s.lock(sess.ThreadKey)()
	cur, err := s.cfg.Sessions.OpenSession(ctx, sess.ThreadKey, in.UserKey(), in.Date)
	if err != nil {
		return nil, fmt.Errorf("rollover: %w", err)
	}
	next, err := s.rollLocked(ctx, cur, div, b, loc)
	if err != nil || next == nil {
		return cur, err
	}
	return next, nil
}

// rollLocked ends cur at boundary b when it has a message before b; it
// returns nil when nothing had to be done.
func (s *Sessions) rollLocked(ctx context.Context, cur *kairos.Session, div Division, b time.Time, loc *time.Location) (*kairos.Session, error) {
	if !b.After(cur.StartedAt) {
		return nil, nil
	}
	first, err := s.cfg.Sessions.Messages(ctx, cur.ID, 0, 1)
	if err != nil {
		return nil, fmt.Errorf("rollover: %w", err)
	}
	// An empty session is not divided: it simply goes on, so idle threads
	// do not collect empty sessions (and the previous summary stays one
	// hop away).
	if len(first) == 0 || !first[0].CreatedAt.Before(b) {
		return nil, nil
	}
	next, err := s.end(ctx, cur, cur.UserKey, autoName(div, b, loc), b, loc)
	if kairos.ErrorCode(err) == kairos.ECONFLICT {
		return nil, nil // ended by another process meanwhile
	}
	return next, err
}

// autoName names the session a division opens: its day, or its ISO week.
func autoName(div Division, b time.Time, loc *time.Location) string {
	l := b.In(loc)
	if div.Kind == DivideWeekly {
		return "Week " + calendar.PeriodKey(kairos.SummaryWeekly, l)
	}
	return l.Format("Monday 2006-01-02")
}

// Divide is the automatic division: every open session whose thread has
// passed a division boundary since its first message is ended at that
// boundary. It returns how many sessions it rolled over; failures of
// single sessions are joined and do not stop the others.
func (s *Sessions) Divide(ctx context.Context, now time.Time) (int, error) {
	div, err := ParseDivision(s.cfg.Policy().Sessions)
	if err != nil {
		return 0, err
	}
	if div.Kind == DivideNone {
		return 0, nil
	}
	open, err := s.cfg.Sessions.ListOpenSessions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, sess := range open {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		loc := s.cfg.location(ctx, sess.ThreadKey, sess.UserKey)
		b := div.Boundary(now, loc)
		if !b.After(sess.StartedAt) {
			continue
		}
		rolled, err := s.divideOne(ctx, sess, div, b, loc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sess.ThreadKey, err))
			continue
		}
		if rolled {
			n++
		}
	}
	return n, errors.Join(errs...)
}

func (s *Sessions) divideOne(ctx context.Context, sess *kairos.Session, div Division, b time.Time, loc *time.Location) (bool, error) {
	defer s.lock(sess.ThreadKey)()
	cur, err := s.cfg.Sessions.FindSession(ctx, sess.ID)
	if err != nil {
		return false, err
	}
	if cur.EndedAt != nil {
		return false, nil // a lazy rollover or /newsession came first
	}
	next, err := s.rollLocked(ctx, cur, div, b, loc)
	return next != nil, err
}
