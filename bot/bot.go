package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/internal/retry"
)

// Handler answers a user's message (the agent).
type Handler interface {
	HandleMessage(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error
}

// Config wires a Bot.
type Config struct {
	Token      string
	APIURL     string // https://api.telegram.org
	HTTPClient *http.Client

	Handler Handler
	// Menu is the command menu registered with setMyCommands (the desk's
	// table: Table.Menu).
	Menu     func() []desk.MenuEntry
	Policy   func() *kairos.Policy
	Access   kairos.AccessStore
	Updates  kairos.UpdateLog
	Settings kairos.SettingStore
	// Approvals persists paused turns (optional: without it approvals
	// live in memory only and die with the process).
	Approvals kairos.ApprovalStore
	// Resume finishes a turn paused for approval whose waiter is gone
	// (a restart, or a dead replica), from its persisted state.
	Resume func(ctx context.Context, state []byte, dec kairos.Decision, out kairos.Replier) error
	// ScheduleButton handles a press of a schedule button (callback data
	// after ScheduleButtonPrefix) by user fromID; it returns the toast
	// and whether to remove the message's keyboard.
	ScheduleButton func(ctx context.Context, fromID, chatID, msgID int64, data string) (answer string, closeKeyboard bool, err error)
	// Claim answers `/start <code>` in a private chat, from anyone, before
	// the access check: the first operator claims the bot this way. It
	// returns handled=false when no claim is pending (the usual /start).
	Claim func(ctx context.Context, userID int64, code string) (reply string, handled bool)
	// SkillButton handles a press of a /skills button (callback data after
	// SkillButtonPrefix), like ScheduleButton.
	SkillButton func(ctx context.Context, fromID int64, data string) (answer string, closeKeyboard bool, err error)
	// Names keeps the first name and @username of the users who may talk
	// to the agent, from their messages (optional; the console shows them).
	Names kairos.NameStore
	// GrantButton handles a press of a /grants button (callback data
	// after GrantButtonPrefix), like SkillButton.
	GrantButton func(ctx context.Context, fromID int64, data string) (answer string, closeKeyboard bool, err error)
	// ParkApprovals: a turn waiting for an approval releases its chat.
	// The request is parked in Approvals and the turn ends; the decision
	// resumes it through Resume, in the chat's turn order (park.go).
	// Needs Approvals and Resume.
	ParkApprovals bool

	Workers     int           // concurrent turns across chats (default 8)
	PollTimeout time.Duration // long-poll timeout (default 30 s)
	Limits      Limits        // outbound limits (default DefaultLimits)
	// EditInterval is the least time between streaming edits of one
	// message (default 1 s).
	EditInterval time.Duration
	// ActionDelay is how long a turn works before the chat shows
	// "typing…" (default DefaultActionDelay): an answer that comes
	// sooner needs no chat action (Telegram advises one only when the
	// answer takes noticeable time).
	ActionDelay time.Duration
	// MaxAttempts gives up an update that crashed the process this often.
	MaxAttempts int
	// SharedOrder keeps per-chat order across replicas sharing one
	// database: a turn holds the chat's lock (Updates must implement
	// kairos.ChatLocker) and first works through the chat's earlier
	// pending updates, whichever replica stored them.
	SharedOrder bool
	// ReplicaID names this process among replicas sharing the database
	// (leases, update ownership; see lease.go). It must differ between
	// live replicas and should stay the same across a restart of one, so
	// it takes its own unfinished updates back at once. Default "local".
	ReplicaID string
	// LeaseTTL is how long the poll and heartbeat leases last without
	// renewal (default DefaultLeaseTTL): a dead replica's poll and updates
	// move to another within about this long.
	LeaseTTL time.Duration

	Metrics Metrics
	Now     func() time.Time
	Logger  *slog.Logger
}

// Metrics receives the bot's observations (may be nil).
type Metrics interface {
	UpdateReceived()
	ReplySent(kind string)
	TooManyRequests()
	QueueDepth(n int)
	StageLatency(stage string, d time.Duration)
}

// Bot is the Telegram front end.
type Bot struct {
	cfg  Config
	api  *client
	lim  *limiter
	log  *slog.Logger
	me   models.User
	pkey []byte // pairing-code key

	attempts *attemptLimiter // refusals to strangers and failed /pair

	mu        sync.Mutex
	chats     map[int64]*chatQueue
	ready     []chatLine // chats with work waiting for a worker, oldest first
	busy      int        // workers running turns (at most cfg.Workers); a turn in kairos.Blocked does not count
	returning int        // turns that lent their worker, waiting to take one back (queue.go)
	handed    int        // workers handed over to returning turns, not yet taken
	freed     sync.Cond  // on mu: busy went down
	inflight  sync.WaitGroup
	queued    int

	approvals sync.Map      // callback id → *pendingApproval (the live waiters of this process)
	names     sync.Map      // user id → the kairos.UserName last stored (names.go)
	resuming  sync.Map      // approval id → chan struct{} closed when its resumed turn is done (park.go)
	parked    sync.Map      // approval id → struct{}: parked here, its expiry timer running (park.go)
	held      holds         // messages waiting for a pending approval (hold.go)
	stopping  chan struct{} // closed when Shutdown begins: persisted approvals stop waiting
	stopOnce  sync.Once

	// work is the context turns run under: it outlives the intake
	// context so SIGTERM lets turns in flight finish (Shutdown cancels it
	// after the drain deadline).
	work       context.Context
	cancelWork context.CancelFunc
	heartbeat  chan struct{} // closed when the replica heartbeat ends (lease.go)
}

// New returns a Bot; it does not talk to Telegram until Run.
func New(cfg Config) (*Bot, error) {
	if cfg.Token == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "TELEGRAM_BOT_TOKEN is required")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.telegram.org"
	}
	if cfg.SharedOrder {
		// Without a lock per chat the replicas would interleave a chat's
		// updates: refuse rather than silently lose the order asked for.
		if _, ok := cfg.Updates.(kairos.ChatLocker); !ok {
			return nil, kairos.Errorf(kairos.EINVALID, "shared per-chat order needs an update store that locks chats (PostgreSQL)")
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 30 * time.Second
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = time.Second
	}
	if cfg.ActionDelay <= 0 {
		cfg.ActionDelay = DefaultActionDelay
	}
	if cfg.ReplicaID == "" {
		cfg.ReplicaID = "local"
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Policy == nil {
		p := kairos.DefaultPolicy()
		cfg.Policy = func() *kairos.Policy { return p }
	}
	if cfg.Metrics == nil {
		cfg.Metrics = nopMetrics{}
	}
	b := &Bot{
		cfg:   cfg,
		api:   &client{base: strings.TrimRight(cfg.APIURL, "/"), token: cfg.Token, http: cfg.HTTPClient},
		lim:   newLimiter(cfg.Limits, time.Now),
		log:   cfg.Logger.With("component", "bot"),
		chats: map[int64]*chatQueue{},

		stopping: make(chan struct{}),
		attempts: newAttemptLimiter(AttemptWindow),
	}
	b.freed.L = &b.mu
	b.work, b.cancelWork = context.WithCancel(context.Background())
	context.AfterFunc(b.work, b.endReady)
	return b, nil
}

// CheckToken asks Telegram who the bot of cfg is, as Run does first, so
// that `kairos run` learns of a refused token before it starts anything:
// EUNAUTHORIZED at once for a refused token; an unreachable Telegram is
// retried (and logged) until it answers or ctx ends.
func CheckToken(ctx context.Context, cfg Config) error {
	b, err := New(cfg)
	if err != nil {
		return err
	}
	defer b.cancelWork()
	return b.getMe(ctx)
}

// Unlimited switches the outbound limiter off (load benchmarks only).
var Unlimited = Limits{PerChat: -1}

// init loads identity and keys; it is called by Run and Webhook.
func (b *Bot) init(ctx context.Context) error {
	if err := b.getMe(ctx); err != nil {
		return err
	}
	key := make([]byte, 32)
	rand.Read(key)
	if b.cfg.Settings != nil {
		v, err := b.cfg.Settings.SetSettingIfAbsent(ctx, "pairing_key", hex.EncodeToString(key))
		if err != nil {
			return err
		}
		if k, err := hex.DecodeString(v); err == nil {
			key = k
		}
	}
	b.pkey = key
	b.registerCommands(ctx)
	return nil
}

// getMe asks Telegram who the bot is. A refused token (401, or 404 for
// one Telegram cannot parse) is an EUNAUTHORIZED error at once; an
// unreachable or failing Telegram (no answer, 429, 5xx) is retried with
// backoff (1 s doubling to 1 min) until it answers or ctx ends.
func (b *Bot) getMe(ctx context.Context) error {
	var wait time.Duration
	for attempt := 1; ; attempt++ {
		err := b.api.call(ctx, "getMe", struct{}{}, &b.me)
		var ae *APIError
		switch {
		case err == nil:
			if attempt > 1 {
				b.log.Info("Telegram reachable again", "attempts", attempt)
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ae) && (ae.Code == 401 || ae.Code == 404):
			return kairos.Errorf(kairos.EUNAUTHORIZED, "Telegram refused TELEGRAM_BOT_TOKEN (%d %s): check the token @BotFather gave you", ae.Code, ae.Description)
		case errors.As(err, &ae) && ae.Code != 0 && ae.Code != 429 && ae.Code < 500:
			return fmt.Errorf("getMe: %w", err)
		}
		wait = retryWait(err, wait, time.Second, time.Minute)
		b.log.Warn("Telegram not reachable at start; retrying", "attempt", attempt, "retry_in", wait, "err", err)
		if err := retry.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (b *Bot) registerCommands(ctx context.Context) {
	type cmd struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	menu := desk.NewTable().Menu
	if b.cfg.Menu != nil {
		menu = func(*kairos.Policy) []desk.MenuEntry { return b.cfg.Menu() }
	}
	var list []cmd
	for _, e := range menu(b.cfg.Policy()) {
		list = append(list, cmd{e.Command, e.Description})
	}
	if err := b.api.call(ctx, "setMyCommands", map[string]any{"commands": list}, nil); err != nil {
		b.log.Warn("setMyCommands failed", "err", err)
	}
}

// Run long-polls Telegram until ctx ends, then waits for turns in flight
// (up to drain) before returning.
func (b *Bot) Run(ctx context.Context, drain time.Duration) error {
	if err := b.init(ctx); err != nil {
		return err
	}
	// Our own poller, not go-telegram/bot's: the offset may move past an
	// update only after it is stored.
	if err := b.api.call(ctx, "deleteWebhook", map[string]any{"drop_pending_updates": false}, nil); err != nil {
		b.log.Warn("deleteWebhook failed", "err", err)
	}
	if err := b.resume(ctx); err != nil {
		return err
	}
	for ctx.Err() == nil {
		pctx, release, ok := b.holdPoll(ctx)
		if !ok {
			break
		}
		err := b.poll(pctx)
		release()
		if err != nil && ctx.Err() == nil {
			b.log.Error("poll", "err", err)
			_ = retry.Sleep(ctx, time.Second)
		}
	}
	b.Shutdown(drain)
	return nil
}

// poll long-polls Telegram until ctx ends (the intake stops, or the poll
// lease is lost). The offset starts past the highest stored update:
// another replica may have polled until now.
func (b *Bot) poll(ctx context.Context) error {
	offset, err := b.cfg.Updates.MaxUpdateID(ctx)
	if err != nil {
		return err
	}
	if offset > 0 {
		offset++
	}
	var errWait time.Duration
	for ctx.Err() == nil {
		var ups []json.RawMessage
		params := map[string]any{"timeout": int(b.cfg.PollTimeout / time.Second), "allowed_updates": []string{"message", "callback_query"}}
		if offset != 0 {
			params["offset"] = offset
		}
		pctx, cancel := context.WithTimeout(ctx, b.cfg.PollTimeout+10*time.Second)
		err := b.api.call(pctx, "getUpdates", params, &ups)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			errWait = b.pollBackoff(err, errWait)
			b.log.Warn("getUpdates failed", "err", err, "retry_in", errWait)
			_ = retry.Sleep(ctx, errWait)
			continue
		}
		errWait = 0
		if len(ups) == 0 {
			continue
		}
		last, err := b.Ingest(ctx, ups)
		if err != nil {
			// Not stored: do not move the offset; Telegram re-sends them.
			b.log.Error("store updates", "err", err)
			_ = retry.Sleep(ctx, time.Second)
			continue
		}
		offset = last + 1
	}
	return nil
}

// pollBackoff is the wait after a failed getUpdates: Telegram's
// retry_after when it gives one; else doubling from 0.5 s, to 30 s for
// outages but only to 5 s for a 409 (another poller, e.g. the replica that
// held the poll lease before), so a handover never waits long.
func (b *Bot) pollBackoff(err error, prev time.Duration) time.Duration {
	limit := 30 * time.Second
	if ae := (*APIError)(nil); errors.As(err, &ae) && ae.Code == http.StatusConflict {
		limit = 5 * time.Second
	}
	return retryWait(err, prev, 500*time.Millisecond, limit)
}

// Ingest stores raw updates (JSON) and schedules the new ones. It returns
// the highest update id seen. Webhook and polling share it.
func (b *Bot) Ingest(ctx context.Context, raws []json.RawMessage) (int64, error) {
	var last int64
	batch := make([]*kairos.RawUpdate, 0, len(raws))
	now := b.cfg.Now()
	for _, raw := range raws {
		var head struct {
			ID      int64 `json:"update_id"`
			Message *struct {
				Chat struct {
					ID int64 `json:"id"`
				} `json:"chat"`
			} `json:"message"`
			Callback *struct {
				From struct {
					ID int64 `json:"id"`
				} `json:"from"`
				Message *struct {
					Chat struct {
						ID int64 `json:"id"`
					} `json:"chat"`
				} `json:"message"`
			} `json:"callback_query"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.ID == 0 {
			b.log.Warn("malformed update skipped", "bytes", len(raw))
			continue
		}
		last = max(last, head.ID)
		chat := int64(0)
		switch {
		case head.Message != nil:
			chat = head.Message.Chat.ID
		case head.Callback != nil && head.Callback.Message != nil:
			chat = head.Callback.Message.Chat.ID
		case head.Callback != nil:
			chat = head.Callback.From.ID
		}
		batch = append(batch, &kairos.RawUpdate{UpdateID: head.ID, ChatID: chat, Payload: raw, ReceivedAt: now, Owner: b.cfg.ReplicaID})
	}
	if len(batch) == 0 {
		return last, nil
	}
	fresh, err := b.cfg.Updates.SaveUpdates(ctx, batch)
	if err != nil {
		return 0, err
	}
	for _, u := range fresh {
		b.cfg.Metrics.UpdateReceived()
		b.schedule(u)
	}
	return last, nil
}

// resume schedules updates stored before a restart but never finished
// (this replica's own, and those of replicas that stopped), then keeps
// the heartbeat and the approval sweeper going until the intake stops.
func (b *Bot) resume(ctx context.Context) error {
	b.startHeartbeat()
	if err := b.claimUpdates(b.work, true); err != nil {
		return fmt.Errorf("load pending updates: %w", err)
	}
	b.startApprovalSweeper(ctx)
	return nil
}

// Shutdown waits up to d for the turns in flight, then cancels the rest
// (they stay pending and resume at the next start).
func (b *Bot) Shutdown(d time.Duration) bool {
	b.stopOnce.Do(func() { close(b.stopping) })
	ok := b.Drain(d)
	b.cancelWork()
	b.releaseLeases()
	return ok
}

// Drain waits up to d for the turns in flight.
func (b *Bot) Drain(d time.Duration) bool {
	done := make(chan struct{})
	go func() { b.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		b.log.Warn("shutdown: turns still running; they resume at next start")
		return false
	}
}

func isCallback(payload []byte) bool {
	var head struct {
		CB json.RawMessage `json:"callback_query"`
	}
	return json.Unmarshal(payload, &head) == nil && len(head.CB) > 0
}

// process handles one stored update and marks it done. A turn that is
// interrupted (shutdown) stays pending and resumes at the next start.
func (b *Bot) process(ctx context.Context, u *kairos.RawUpdate) {
	start := time.Now()
	var upd models.Update
	decodeErr := json.Unmarshal(u.Payload, &upd)
	if decodeErr == nil && b.holdIfDepends(ctx, u, upd.Message) {
		return // it waits for an approval of its chat (hold.go)
	}
	attempts, err := b.cfg.Updates.BumpAttempts(ctx, u.UpdateID)
	if err != nil {
		b.log.Error("count attempt", "err", err)
		return
	}
	if attempts > b.cfg.MaxAttempts {
		b.log.Error("update abandoned after repeated failures", "update_id", u.UpdateID, "attempts", attempts-1)
		b.markDone(ctx, u)
		return
	}
	if decodeErr != nil {
		b.log.Warn("undecodable update skipped", "update_id", u.UpdateID, "err", decodeErr)
		b.markDone(ctx, u)
		return
	}
	switch {
	case upd.CallbackQuery != nil:
		b.handleCallback(ctx, upd.CallbackQuery)
	case upd.Message != nil:
		ctx = b.deferWrites(ctx) // the turn's bookkeeping commits with its answer (batch.go)
		if err := b.handleMessage(ctx, u, upd.Message, attempts == 1); err != nil {
			if ctx.Err() != nil {
				return // shutting down: leave it pending
			}
			if desk.Fault(err) {
				b.log.Error("handle message", "update_id", u.UpdateID, "err", err)
			} else {
				b.log.Warn("handle message", "update_id", u.UpdateID, "code", kairos.ErrorCode(err), "err", err)
			}
		}
	}
	b.markDone(ctx, u)
	b.cfg.Metrics.StageLatency("update", time.Since(start))
}

func (b *Bot) markDone(ctx context.Context, u *kairos.RawUpdate) {
	if err := b.cfg.Updates.MarkUpdateDone(context.WithoutCancel(ctx), u.UpdateID); err != nil {
		b.log.Error("mark update done", "err", err)
	}
}

// Allowed reports whether a user may reach the agent: an operator or
// allowed user of the policy, or one admitted at run time (pairing,
// kairos access allow, a claimed operator).
// The rule is the desk's (desk.PrincipalOf), not the bot's own.
func (b *Bot) Allowed(ctx context.Context, userID int64) (bool, error) {
	var access desk.Access
	if b.cfg.Access != nil {
		access = b.cfg.Access
	}
	pr, err := desk.PrincipalOf(ctx, b.cfg.Policy(), access, userID)
	return pr.Role > kairos.StrangerRole, err
}

// handleMessage turns a Telegram message into an Inbound and routes it;
// fresh: this is the update's first attempt.
func (b *Bot) handleMessage(ctx context.Context, u *kairos.RawUpdate, m *models.Message, fresh bool) error {
	atts := b.attachments(m)
	if m.From == nil || m.From.IsBot || (m.Text == "" && len(atts) == 0) {
		return nil // service messages, channel posts, stickers: nothing to answer
	}
	in := b.inbound(u, m)
	if len(atts) > 0 {
		in.Text, in.Attachments = m.Caption, atts
	}
	pol := b.cfg.Policy()
	allowed, err := b.Allowed(ctx, in.UserID)
	if err != nil {
		return err
	}
	cmd, args, isCmd := desk.ParseCommand(in.Text)
	isCmd = isCmd && desk.Own(in)
	if in.ChatKind == kairos.ChatGroup && !in.Addressed && pol.Access.GroupReplies != "all" {
		return nil
	}
	out := b.replier(u.UpdateID, in)
	out.fresh = fresh
	if isCmd && cmd == "start" && args != "" && in.ChatKind == kairos.ChatDM && b.cfg.Claim != nil {
		if text, ok := b.cfg.Claim(ctx, in.UserID, args); ok {
			return out.Final(ctx, text)
		}
	}
	if !allowed {
		return b.refuse(ctx, in, out)
	}
	b.noteName(ctx, in, m.From)
	if len(in.Text) > kairos.MaxInboundText {
		return out.Final(ctx, fmt.Sprintf("That message is too long for me (%d bytes; the limit is %d). Please send it in smaller parts.", len(in.Text), kairos.MaxInboundText))
	}
	if !isCmd || len(in.Attachments) > 0 {
		stop := out.keepAction(ctx)
		defer stop()
	}
	// The desk decides the rest: a command (who may run it, and where), a
	// forwarded command or directive (not run), or a turn.
	return b.cfg.Handler.HandleMessage(withCommandReplier(ctx, out), in, out)
}

func (b *Bot) inbound(u *kairos.RawUpdate, m *models.Message) *kairos.Inbound {
	in := &kairos.Inbound{
		Channel:   kairos.ChannelTelegram,
		UpdateID:  u.UpdateID,
		ChatID:    m.Chat.ID,
		UserID:    m.From.ID,
		UserName:  strings.TrimSpace(m.From.FirstName + " " + m.From.LastName),
		MessageID: int64(m.ID),
		Text:      m.Text,
		Date:      time.Unix(int64(m.Date), 0).UTC(),
		ChatKind:  kairos.ChatDM,
		Surface:   kairos.SurfacePrivate,
	}
	if m.Chat.Type != models.ChatTypePrivate {
		in.ChatKind, in.Surface = kairos.ChatGroup, kairos.SurfaceGroup
		if m.IsTopicMessage || m.MessageThreadID != 0 {
			in.TopicID = int64(m.MessageThreadID)
		}
		in.Addressed = b.addressed(m)
	}
	if m.Date == 0 {
		in.Date = b.cfg.Now().UTC()
	}
	switch {
	case m.IsAutomaticForward:
		in.Origin, in.Untrusted = kairos.OriginChannel, "a channel's post"
	case m.ForwardOrigin != nil:
		in.Origin, in.Untrusted = kairos.OriginForwarded, "a forwarded message"
	}
	return in
}

type nopMetrics struct{}

func (nopMetrics) UpdateReceived()                    {}
func (nopMetrics) ReplySent(string)                   {}
func (nopMetrics) TooManyRequests()                   {}
func (nopMetrics) QueueDepth(int)                     {}
func (nopMetrics) StageLatency(string, time.Duration) {}

// Notify sends a Markdown message to a chat outside any turn (operator
// notices).
func (b *Bot) Notify(ctx context.Context, chatID int64, markdown string) error {
	in := &kairos.Inbound{Channel: kairos.ChannelTelegram, ChatID: chatID, UserID: chatID, ChatKind: kairos.ChatDM}
	for _, part := range SplitMarkdown(markdown, MaxMessageUnits) {
		if _, err := b.send(ctx, in, part, nil); err != nil {
			return err
		}
	}
	return nil
}
