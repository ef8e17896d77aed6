package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/store"
	schedtool "github.com/kairos-agent/kairos/tools/schedule"
	skilltool "github.com/kairos-agent/kairos/tools/skill"
	"github.com/kairos-agent/kairos/usage"
	"github.com/kairos-agent/kairos/web"
)

// consoleBackend is web.Backend over the core and the bot.
type consoleBackend struct {
	*store.Directory
	m *Main
	c *core
	b *bot.Bot
	// policyMu takes policy replacements one at a time.
	policyMu sync.Mutex
}

var _ web.Backend = (*consoleBackend)(nil)

// serveWeb registers the query API and the console on the admin mux; ln
// is the admin listener (its address is the sign-in links' default base).
func (m *Main) serveWeb(c *core, b *bot.Bot, mux *http.ServeMux, ln net.Listener) *web.Server {
	base := m.Config.ConsoleURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	be := &consoleBackend{Directory: store.NewDirectory(c.db), m: m, c: c, b: b}
	srv := web.New(web.Config{Backend: be, Store: store.NewAPIStore(c.db), ConsoleURL: base, Now: c.now, Logger: c.log})
	srv.Register(mux)
	return srv
}

// consoleCommand is /console: a single-use sign-in link for an operator.
// It answers only in a private chat (the link signs in whoever opens it);
// in kairos chat, which serves no console, it says how to get one.
func consoleCommand(srv func() *web.Server) desk.Command {
	return desk.Command{Name: "console", Description: "A one-time sign-in link to the web console (operators)", Operators: true, Private: true,
		Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
			if in.Surface == kairos.SurfaceTerminal {
				return "kairos chat serves no web console. Run `kairos run` (it serves the console on KAIROS_HTTP_ADDR) and send /console to the bot in a private chat for a sign-in link.", nil
			}
			s := srv()
			if s == nil {
				return "", kairos.Errorf(kairos.EUNAVAILABLE, "The console is not serving yet; try again in a moment.")
			}
			link, err := s.SignInLink(ctx, in.UserID)
			if err != nil {
				return "", err
			}
			return "Your console sign-in link (works once, for 10 minutes; don't forward it):\n" + link, nil
		}}
}

func (be *consoleBackend) IsOperator(id int64) bool { return be.c.policy().IsOperator(id) }

func (be *consoleBackend) SearchMemories(ctx context.Context, userKey, query string, limit int) ([]*kairos.Memory, error) {
	return be.c.memories.RecallMemories(ctx, kairos.MemoryFilter{UserKey: userKey, Query: query, Limit: limit})
}

func (be *consoleBackend) ForgetMemory(ctx context.Context, userKey, id string) error {
	return be.c.memories.ForgetMemory(ctx, userKey, id)
}

func (be *consoleBackend) Schedules(ctx context.Context, userID int64, p kairos.Page) ([]web.ScheduleRow, string, error) {
	list, next, err := be.SchedulePage(ctx, userID, p)
	if err != nil {
		return nil, "", err
	}
	out := make([]web.ScheduleRow, len(list))
	for i, s := range list {
		out[i] = web.ScheduleRowOf(s, schedtool.Title(s))
	}
	return out, next, nil
}

func (be *consoleBackend) CancelSchedule(ctx context.Context, id string) error {
	s, err := be.c.sched.store.ScheduleByRef(ctx, id)
	if err != nil {
		return err
	}
	if err := be.c.sched.store.CancelSchedule(ctx, s.ID, 0); err != nil {
		return err
	}
	be.c.sched.wake()
	return nil
}

func (be *consoleBackend) DecideApproval(ctx context.Context, id string, approve bool, by string) (string, error) {
	return be.b.Decide(ctx, id, approve, by)
}

func (be *consoleBackend) Usage(ctx context.Context, userID int64, since time.Time) ([]web.UsageRow, error) {
	return usageReport(ctx, be.c.db, userID, since.Format(time.DateOnly), be.c.now())
}

// Zone is an operator's own zone (UTC when unknown).
func (be *consoleBackend) Zone(ctx context.Context, userID int64) *time.Location {
	if loc := userZone(store.NewClockStore(be.c.db), be.c.now)(ctx, kairos.UserKey(kairos.ChannelTelegram, userID)); loc != nil {
		return loc
	}
	return time.UTC
}

func (be *consoleBackend) Skills(ctx context.Context) ([]web.SkillRow, error) {
	list, err := store.NewSkillStore(be.c.db).Skills(ctx, kairos.SkillFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]web.SkillRow, len(list))
	for i, s := range list {
		out[i] = web.SkillRowOf(s)
	}
	return out, nil
}

func (be *consoleBackend) Skill(ctx context.Context, id int64) (*web.SkillDetail, error) {
	sk, err := be.c.skills.panel.ByID(ctx, id)
	if err != nil {
		return nil, err
	}
	vs, err := be.c.skills.store.SkillVersions(ctx, id)
	if err != nil {
		return nil, err
	}
	return web.SkillDetailOf(sk, vs, skilltool.VersionDiff), nil
}

// SkillAction applies an operator's action as /skills' buttons do.
func (be *consoleBackend) SkillAction(ctx context.Context, id int64, action string, to int) (string, error) {
	sk, err := be.c.skills.panel.ByID(ctx, id)
	if err != nil {
		return "", err
	}
	return be.c.skills.panel.Apply(ctx, sk, action, to, true)
}

func (be *consoleBackend) Tools(ctx context.Context) (*web.ToolsView, error) {
	return toolsView(be.c), nil
}

func (be *consoleBackend) PolicyText() (string, *kairos.Policy) {
	b, err := os.ReadFile(be.m.Config.PolicyPath)
	if err != nil {
		return "", be.c.policy()
	}
	return string(b), be.c.policy()
}

func (be *consoleBackend) PolicyView() (*web.PolicyView, error) {
	v := &web.PolicyView{Path: be.m.Config.PolicyPath}
	b, err := os.ReadFile(v.Path)
	v.Exists, v.Text = err == nil, string(b)
	eff, err := policy.Effective(be.c.policy())
	v.Effective = string(eff)
	return v, err
}

func (be *consoleBackend) CheckPolicy(text []byte) []web.PolicyProblem {
	_, err := policy.Parse(filepath.Base(be.m.Config.PolicyPath), text)
	return problems(err)
}

// problems lists a policy error's positions.
func problems(err error) []web.PolicyProblem {
	if err == nil {
		return nil
	}
	var errs policy.Errors
	if !errors.As(err, &errs) {
		return []web.PolicyProblem{{Line: 1, Column: 1, Message: err.Error()}}
	}
	out := make([]web.PolicyProblem, len(errs))
	for i, e := range errs {
		out[i] = web.PolicyProblem{Line: e.Line, Column: e.Col, Message: e.Msg}
	}
	return out
}

// ReplacePolicy writes a valid text over the policy file atomically (the
// watcher then applies it, as it would an edit by hand), unless it would
// widen the policy (policy.WebEditRefusal) against the policy in force or
// the file as it is now: the web may only narrow what the operator wrote
// on the host. Replacements are taken one at a time, so each is judged
// against the one before it.
func (be *consoleBackend) ReplacePolicy(ctx context.Context, text []byte) ([]web.PolicyProblem, error) {
	path := be.m.Config.PolicyPath
	proposed, err := policy.Parse(filepath.Base(path), text)
	if err != nil {
		return problems(err), nil
	}
	be.policyMu.Lock()
	defer be.policyMu.Unlock()
	err = policy.WebEditRefusal(be.c.policy(), proposed)
	if onDisk, lerr := policy.Load(path); err == nil && lerr == nil {
		err = policy.WebEditRefusal(onDisk, proposed)
	}
	var refused *policy.WebEditError
	if errors.As(err, &refused) {
		be.c.log.Warn("policy edit from the web refused", "path", path, "key", refused.Key)
		return nil, err
	}
	if err := writeFileAtomic(path, text, 0o600); err != nil {
		return nil, fmt.Errorf("write policy: %w", err)
	}
	be.c.log.Info("policy replaced through the console or API", "path", path)
	return nil, nil
}

// RunTurn answers as if the user had written in their DM, in that chat's
// turn order (bot.InChat). Approvals are asked in that chat (a human must say yes where they talk to the bot);
// deliver says whether the answer goes there too.
func (be *consoleBackend) RunTurn(ctx context.Context, userID int64, text string, deliver bool) (string, error) {
	ok, err := be.b.Allowed(ctx, userID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", kairos.Errorf(kairos.EFORBIDDEN, "User %d may not talk to the agent (access.allowed_users or kairos access allow).", userID)
	}
	in := &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: userID, UserID: userID, ChatKind: kairos.ChatDM,
		Surface: kairos.SurfaceAPI, Text: text, Date: be.c.now(), Addressed: true}
	out := &apiReplier{tg: be.b.Replier(in), deliver: deliver}
	// In the chat's queue, as a Telegram message of that chat would be:
	// never beside another turn of the thread, whose history it shares.
	var turnErr error
	if err := be.b.InChat(ctx, in.ChatID, func(ctx context.Context) {
		turnErr = be.c.desk.HandleMessage(ctx, in, out)
	}); err != nil {
		return "", err
	}
	if turnErr != nil {
		return "", turnErr
	}
	if out.failed != nil { // the chat got the apology; the caller gets the code
		return "", out.failed
	}
	return out.text, nil
}

// apiReplier keeps the answer for the API caller and, with deliver, sends
// it to the chat too; approvals are always asked in the chat.
type apiReplier struct {
	tg      kairos.Replier
	deliver bool
	text    string
	failed  error // the turn failed (an outage): the API answers with its code
}

var _ kairos.FailureReplier = (*apiReplier)(nil)

// Failure keeps a failed turn's error for the API's status; with deliver
// the chat gets the apology, as a Telegram message's turn would.
func (r *apiReplier) Failure(ctx context.Context, err error, apology string) error {
	r.failed = err
	if r.deliver {
		return r.tg.Final(ctx, apology)
	}
	return nil
}

func (r *apiReplier) Typing(ctx context.Context) {
	if r.deliver {
		r.tg.Typing(ctx)
	}
}

func (r *apiReplier) Partial(ctx context.Context, text string) {
	if r.deliver {
		r.tg.Partial(ctx, text)
	}
}

func (r *apiReplier) Final(ctx context.Context, text string) error {
	r.text = text
	if r.deliver {
		return r.tg.Final(ctx, text)
	}
	return nil
}

// Approve asks in the chat. The request does not hold the chat (nor the
// caller): the turn parks, the caller is told so, and once decided the
// turn's answer goes to the chat.
func (r *apiReplier) Approve(ctx context.Context, req *kairos.ApprovalRequest) (kairos.Decision, error) {
	dec, err := r.tg.Approve(ctx, req)
	if errors.Is(err, kairos.ErrHandedOff) {
		r.text = "Waiting for approval in the user's chat: " + req.Summary + " Once it is decided, the answer goes to the chat."
	}
	return dec, err
}

func (be *consoleBackend) Overview(ctx context.Context) (*web.Overview, error) {
	turns, lat, errs := be.c.metrics.Activity().LastHour()
	o := &web.Overview{TurnsPerMinute: turns, ModelLatencyMS: lat, Errors: errs}
	today, err := usage.Today(ctx, store.NewUsageStore(be.c.db), userZone(store.NewClockStore(be.c.db), be.c.now), be.c.now())
	if err != nil {
		return nil, err
	}
	o.TokensToday, o.CostTodayUSD = today.Tokens(), today.CostUSD
	if o.Users, o.PendingApproval, err = be.Counts(ctx); err != nil {
		return nil, err
	}
	return o, nil
}
