package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

// Approvals (issue 13): a turn paused for Approve/Deny is a row in the
// approval store, written with the keyboard's message id and the agent's
// state of the turn; the update that started the turn is marked done in
// the same transaction, so a restart does not run the turn again from
// the start: the row is its continuation.
//
//   - Decided once: pending → approved/denied/expired is a conditional
//     update; whoever wins it edits the keyboard so it offers no buttons.
//   - Continued once: after the decision, whoever continues the turn
//     first claims it (claimed_by, also conditional). The live waiter
//     claims when it learns the decision: at once through its channel
//     when the button press reached this process, else by polling the row
//     every approvalPoll (the press reached another replica).
//   - The waiter refreshes the row's heartbeat while it polls. A decided
//     turn whose heartbeat is older than approvalStale has no waiter (the
//     process died): the replica that took the press, or the sweeper,
//     claims it and resumes it through Config.Resume.
//   - A pending request that expired with no waiter is expired by the
//     sweeper: keyboard edited, the user told once.
const (
	approvalPoll  = 500 * time.Millisecond
	approvalStale = 3 * time.Second
	approvalSweep = time.Second
	// approvalReshow is how long a pending request may go without its
	// keyboard's message id and without a heartbeat before the sweeper
	// shows the keyboard again (the asker died before recording it; a
	// slow send under the rate limits is not a death).
	approvalReshow = 30 * time.Second
)

// Claimers recorded in claimed_by.
const (
	claimWaiter  = "waiter"
	claimResumer = "resumer"
	claimExpiry  = "expiry"
)

// pendingApproval is a live waiter of this process.
type pendingApproval struct {
	ch        chan kairos.Decision
	userID    int64
	grantable bool
	kb        atomic.Pointer[keyboardMsg] // set once the keyboard is sent
	decided   atomic.Bool                 // in-memory requests only (no store)
	closed    atomic.Bool                 // the keyboard was edited to show the outcome
}

// closeOnce closes pa's keyboard unless it was closed already. A press can
// reach handleCallback before Approve has recorded the keyboard's message
// id (or the row its message id); then the press closes nothing and
// Approve closes it once it has the id.
func (b *Bot) closeOnce(ctx context.Context, pa *pendingApproval, kb *keyboardMsg, dec kairos.Decision) {
	if kb != nil && kb.msgID != 0 && pa.closed.CompareAndSwap(false, true) {
		b.closeKeyboard(ctx, *kb, dec)
	}
}

// keyboardMsg locates an approval keyboard for the edit that closes it.
type keyboardMsg struct {
	in    *kairos.Inbound
	msgID int64
	text  string
	zone  string // the user's zone: the decided line's clock time
}

// inlineKeyboard is sent as our own JSON: go-telegram/bot's button type
// always serialises copy_text, which the real API rejects.
type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// noButtons is the markup that removes a keyboard.
var noButtons = inlineKeyboard{InlineKeyboard: [][]inlineButton{}}

// Approve sends an inline keyboard and waits for the answer. With a store
// and a turn state the request is persisted first (see above).
func (r *replier) Approve(ctx context.Context, req *kairos.ApprovalRequest) (kairos.Decision, error) {
	b := r.b
	tok := make([]byte, 8)
	rand.Read(tok)
	id := hex.EncodeToString(tok)
	wait := req.ExpiresAt.Sub(b.cfg.Now())
	text := b.approvalText(ctx, r.in, id, req)
	kb := approvalKeyboard(id, req.Grantable)
	ch := make(chan kairos.Decision, 1)
	pa := &pendingApproval{ch: ch, userID: r.in.UserID, grantable: req.Grantable}
	b.approvals.Store(id, pa)
	defer b.approvals.Delete(id)
	st := b.cfg.Approvals
	persist := st != nil && req.State != nil
	if persist {
		// The row is committed before the keyboard leaves, with the
		// update marked done: a press that reaches another replica at
		// once finds it (issue 20), and from here on the row is the
		// turn's continuation (a crash before the send: the sweeper shows
		// the keyboard again, see reshowApproval).
		row := &kairos.PendingApproval{ID: id, UpdateID: r.upd, ChatID: r.in.ChatID, ChatKind: r.in.ChatKind, TopicID: r.in.TopicID,
			UserID: r.in.UserID, ThreadKey: req.ThreadKey, Action: req.Action, Tool: req.Tool, Grantable: req.Grantable,
			Target: req.Target, TargetLabel: req.TargetLabel, SourceMessageID: r.in.MessageID, Zone: req.Zone, Text: text,
			State: req.State, ExpiresAt: req.ExpiresAt}
		if err := st.CreateApproval(ctx, row, r.upd != 0); err != nil {
			return kairos.Decision{Outcome: kairos.DecisionDenied}, err
		}
	}
	var msgID int64
	var err error
	if persist {
		msgID, err = b.sendKeyboardOnce(ctx, r.in, id, text, kb)
	} else {
		msgID, err = b.send(ctx, r.in, text, kb)
	}
	if err != nil {
		if persist { // never shown: nobody may decide it, and nobody is told it expired
			b.withdrawApproval(context.WithoutCancel(ctx), id)
		}
		return kairos.Decision{Outcome: kairos.DecisionDenied}, err
	}
	kbm := keyboardMsg{in: r.in, msgID: msgID, text: text, zone: req.Zone}
	pa.kb.Store(&kbm)
	if persist && msgID != 0 { // 0: a sweeper's re-show sent it and records it
		open, err := st.SetApprovalMessage(context.WithoutCancel(ctx), id, msgID, false)
		if err != nil {
			b.closeKeyboard(context.WithoutCancel(ctx), kbm, kairos.Decision{Outcome: kairos.DecisionDenied, At: b.cfg.Now()})
			return kairos.Decision{Outcome: kairos.DecisionDenied}, err
		}
		if !open {
			// Decided before the message id was recorded: the decider
			// could not close the keyboard, so this process does.
			if row, err := st.FindApproval(ctx, id); err == nil {
				b.closeOnce(context.WithoutCancel(ctx), pa, &kbm, rowDecision(row))
			}
		}
	}
	if persist && b.cfg.ParkApprovals {
		return b.park(ctx, id, pa, kbm, req.ExpiresAt)
	}
	return b.awaitDecision(ctx, id, pa, kbm, wait, persist)
}

// maxInlineDetail is the longest detail shown inside the approval
// message; a longer one (a skill's whole code) goes as a document first.
const maxInlineDetail = 2500

// approvalDetail shows what is to be approved: inline as preformatted
// text when short, else as a text document sent just before the
// keyboard, which the message then points to.
func (b *Bot) approvalDetail(ctx context.Context, in *kairos.Inbound, id, detail string) string {
	if strings.TrimSpace(detail) == "" {
		return ""
	}
	if len(detail) <= maxInlineDetail {
		return "<pre>" + escape(detail) + "</pre>\n"
	}
	if _, err := b.api.upload(ctx, "sendDocument", in, "document", "approval-"+id+".txt", []byte(detail)); err != nil {
		b.log.Warn("send approval document", "err", err)
		return "<pre>" + escape(kairos.Clip(detail, maxInlineDetail)) + "</pre>\n(the rest could not be sent)\n"
	}
	return "<i>The whole of it is in the document above.</i>\n"
}

// awaitDecision waits for the press, the expiry, another replica's
// decision (polled on the row, which is also this waiter's heartbeat) or
// the shutdown, whichever comes first.
func (b *Bot) awaitDecision(ctx context.Context, id string, pa *pendingApproval, kbm keyboardMsg, wait time.Duration,
	persist bool) (kairos.Decision, error) {
	ch, st := pa.ch, b.cfg.Approvals
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var tick <-chan time.Time
	var stopping <-chan struct{}
	if persist {
		stopping = b.stopping
		tk := time.NewTicker(approvalPoll)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case dec := <-ch:
			return b.takePress(ctx, id, pa, kbm, dec, persist)
		case <-tick:
			row, err := st.HeartbeatApproval(ctx, id, b.cfg.Now())
			if err != nil {
				b.log.Warn("approval heartbeat", "err", err)
				continue
			}
			if row.Status != kairos.ApprovalPending {
				return b.claimAsWaiter(ctx, id, rowDecision(row), persist)
			}
		case <-timer.C:
			now := b.cfg.Now()
			if !persist {
				if !pa.decided.CompareAndSwap(false, true) {
					continue // a press is being delivered on ch
				}
				b.closeOnce(ctx, pa, &kbm, kairos.Decision{Outcome: kairos.DecisionExpired, At: now})
				return kairos.Decision{Outcome: kairos.DecisionExpired, At: now}, nil
			}
			won, err := st.DecideApproval(ctx, id, kairos.DecisionExpired, "", now)
			if err != nil {
				b.log.Warn("expire approval", "err", err)
				timer.Reset(approvalPoll)
				continue
			}
			if won {
				b.closeOnce(ctx, pa, &kbm, kairos.Decision{Outcome: kairos.DecisionExpired, At: now})
				return b.claimAsWaiter(ctx, id, kairos.Decision{Outcome: kairos.DecisionExpired, At: now}, persist)
			}
			// Decided elsewhere just now: the next tick reads it.
		case <-stopping:
			// Shutting down: the row is the turn's continuation (a press
			// after the restart resumes it); do not hold the drain.
			return kairos.Decision{Outcome: kairos.DecisionDenied}, kairos.ErrHandedOff
		case <-ctx.Done():
			return kairos.Decision{Outcome: kairos.DecisionDenied}, ctx.Err()
		}
	}
}

// claimAsWaiter takes the continuation of a decided request for the turn
// still running in this process.
func (b *Bot) claimAsWaiter(ctx context.Context, id string, dec kairos.Decision, persist bool) (kairos.Decision, error) {
	if !persist {
		return dec, nil
	}
	ok, err := b.cfg.Approvals.ClaimApproval(context.WithoutCancel(ctx), id, claimWaiter)
	if err != nil {
		b.log.Warn("claim approval", "err", err)
		return dec, nil
	}
	if !ok {
		return dec, kairos.ErrHandedOff
	}
	return dec, nil
}

func rowDecision(row *kairos.PendingApproval) kairos.Decision {
	return kairos.Decision{Outcome: row.Status, By: row.DecidedBy, At: row.DecidedAt, Scope: row.Scope}
}

func rowKeyboard(row *kairos.PendingApproval) keyboardMsg {
	return keyboardMsg{in: rowInbound(row), msgID: row.MessageID, text: row.Text, zone: row.Zone}
}

func rowInbound(row *kairos.PendingApproval) *kairos.Inbound {
	return &kairos.Inbound{Channel: kairos.ChannelTelegram, UpdateID: row.UpdateID, ChatID: row.ChatID, ChatKind: row.ChatKind,
		TopicID: row.TopicID, UserID: row.UserID}
}

// closeKeyboard edits an approval message so it shows who decided, how
// and when, and no buttons.
func (b *Bot) closeKeyboard(ctx context.Context, kb keyboardMsg, dec kairos.Decision) {
	if kb.msgID == 0 {
		return
	}
	if err := b.edit(ctx, kb.in, kb.msgID, kb.text+"\n\n"+decidedLine(dec, kb.zone, b.cfg.Now()), noButtons); err != nil {
		b.log.Warn("close approval keyboard", "err", err)
	}
}

// handleCallback resolves an approval button press. Only the user who was
// asked, or an operator, may decide; only the asked user may allow for
// longer than once, and only where the request offered it; the first
// decision wins.
func (b *Bot) handleCallback(ctx context.Context, cq *models.CallbackQuery) {
	answer := func(text string) {
		if err := b.api.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": cq.ID, "text": text}, nil); err != nil {
			b.log.Debug("answerCallbackQuery failed", "err", err)
		}
	}
	if b.otherButton(ctx, cq, answer) {
		return
	}
	id, choice, ok := parseApprovalData(cq.Data)
	if !ok {
		answer("Unknown button.")
		return
	}
	cs := choiceScope[choice]
	dec := kairos.Decision{Outcome: cs.outcome, Scope: cs.scope, By: kairos.UserKey(kairos.ChannelTelegram, cq.From.ID),
		ByName: cq.From.FirstName, At: b.cfg.Now()}
	var local *pendingApproval
	if v, ok := b.approvals.Load(id); ok {
		local = v.(*pendingApproval)
	}
	var row *kairos.PendingApproval
	if st := b.cfg.Approvals; st != nil {
		var err error
		row, err = st.FindApproval(ctx, id)
		if err != nil && kairos.ErrorCode(err) != kairos.ENOTFOUND {
			b.log.Error("find approval", "err", err)
			answer("Something went wrong; please press again.")
			return
		}
	}
	if row == nil && local == nil {
		answer("This request is no longer open.")
		return
	}
	if m := cq.Message.Message; row != nil && row.MessageID == 0 && m != nil && m.Chat.ID == row.ChatID {
		// The asker died (or is slow) before recording its keyboard's
		// message id: the press names the message.
		row.MessageID = int64(m.ID)
	}
	asked, grantable := localAsked(local)
	if row != nil {
		asked, grantable = row.UserID, row.Grantable
	}
	if refusal := pressRefusal(b.cfg.Policy(), cq.From.ID, asked, grantable, dec.Scope); refusal != "" {
		answer(refusal)
		return
	}
	if row == nil { // in memory only
		if !local.decided.CompareAndSwap(false, true) {
			answer("This request was already decided.")
			return
		}
		b.closeOnce(ctx, local, local.kb.Load(), dec)
		deliver(local.ch, dec)
		answer(choiceAnswer(dec.Outcome, dec.Scope))
		return
	}
	b.decidePersisted(ctx, id, dec, row, local, answer)
}

func localAsked(pa *pendingApproval) (int64, bool) {
	if pa == nil {
		return 0, false
	}
	return pa.userID, pa.grantable
}

// pressRefusal says why a press by `from` may not decide ("" when it
// may): someone else than the asked user or an operator; a standing
// grant the request did not offer (a forged button), or one chosen by
// anyone but the asked user (an operator approves for once).
func pressRefusal(p *kairos.Policy, from, asked int64, grantable bool, scope string) string {
	switch {
	case from != asked && !p.IsOperator(from):
		return "Only the person who asked, or an operator, can decide."
	case scope != kairos.GrantOnce && !grantable:
		return "This request can only be approved once."
	case scope != kairos.GrantOnce && from != asked:
		return "Only the person who asked can allow it for longer; you can approve it once."
	}
	return ""
}

// otherButton hands a press of a non-approval button to its handler and
// reports whether it did.
func (b *Bot) otherButton(ctx context.Context, cq *models.CallbackQuery, answer func(string)) bool {
	switch {
	case strings.HasPrefix(cq.Data, ScheduleButtonPrefix) && b.cfg.ScheduleButton != nil:
		var chatID, msgID int64
		if m := cq.Message.Message; m != nil {
			chatID, msgID = m.Chat.ID, int64(m.ID)
		}
		b.scheduleCallback(ctx, cq.From.ID, chatID, msgID, cq.Data, answer)
	case strings.HasPrefix(cq.Data, SkillButtonPrefix) && b.cfg.SkillButton != nil:
		b.skillCallback(ctx, cq, answer)
	case strings.HasPrefix(cq.Data, GrantButtonPrefix) && b.cfg.GrantButton != nil:
		b.grantCallback(ctx, cq, answer)
	default:
		return false
	}
	return true
}

// decidePersisted decides a persisted request once (a conditional update),
// closes its keyboard and hands the decision to the waiter here, or makes
// sure the turn is continued when the waiter may be gone.
func (b *Bot) decidePersisted(ctx context.Context, id string, dec kairos.Decision, row *kairos.PendingApproval,
	local *pendingApproval, answer func(string)) {
	st := b.cfg.Approvals
	won, err := st.DecideApprovalAs(ctx, id, dec)
	if err != nil {
		b.log.Error("decide approval", "err", err)
		answer("Something went wrong; please press again.")
		return
	}
	if won {
		answer(choiceAnswer(dec.Outcome, dec.Scope))
		if row.MessageID == 0 {
			// Read before the asking replica recorded its keyboard: read
			// again (that write precedes this decision or fails on it,
			// and then the asker closes the keyboard).
			if fresh, err := st.FindApproval(ctx, id); err == nil && fresh.MessageID != 0 {
				row = fresh
			}
		}
		if local != nil {
			kb := rowKeyboard(row)
			if lk := local.kb.Load(); kb.msgID == 0 && lk != nil {
				kb = *lk
			}
			b.closeOnce(ctx, local, &kb, dec)
			deliver(local.ch, dec)
			return
		}
		b.closeKeyboard(ctx, rowKeyboard(row), dec)
	} else {
		known := row.MessageID // perhaps learnt from the press
		if row, err = st.FindApproval(ctx, id); err != nil {
			answer("This request is no longer open.")
			return
		}
		if row.MessageID == 0 {
			row.MessageID = known
		}
		if row.Status == kairos.ApprovalPending { // past its expiry, not yet swept
			answer("This request has expired.")
			b.expireOrphan(ctx, row)
			return
		}
		answer(map[string]string{kairos.DecisionApproved: "Already approved.", kairos.DecisionDenied: "Already denied.",
			kairos.DecisionExpired: "This request has expired."}[row.Status])
		if row.ClaimedBy != "" || row.Status == kairos.DecisionExpired {
			return
		}
		dec = rowDecision(row) // decided, never continued: the waiter may be gone
	}
	b.continueOrphan(ctx, id, dec)
}

// continueOrphan makes sure a decided turn is continued: a live waiter
// (here or on another replica) claims it within approvalPoll; when the
// row's heartbeat goes stale nobody waits, and this replica resumes it.
func (b *Bot) continueOrphan(ctx context.Context, id string, dec kairos.Decision) {
	st := b.cfg.Approvals
	for ctx.Err() == nil {
		row, err := st.FindApproval(ctx, id)
		if err != nil {
			b.log.Warn("approval continuation", "err", err)
			return
		}
		if row.ClaimedBy != "" {
			return
		}
		if b.cfg.Now().Sub(row.HeartbeatAt) > approvalStale && !b.waitsHere(id) {
			b.resumeOrphan(ctx, row, dec)
			return
		}
		_ = retry.Sleep(ctx, approvalPoll/2)
	}
}

// waitsHere reports whether a request's waiter is alive in this process.
// A stale heartbeat means "nobody waits" only for another replica's
// waiter: this process's own may be slow to beat on a loaded machine
// (its own timer and polls still finish the request), and taking its
// request from it would end the turn without the model's answer.
func (b *Bot) waitsHere(id string) bool {
	_, ok := b.approvals.Load(id)
	return ok
}

// expiresHere reports whether a parked request's expiry timer runs in
// this process (the sweeper leaves its expiry to it).
func (b *Bot) expiresHere(id string) bool {
	_, ok := b.parked.Load(id)
	return ok
}

// resumeOrphan claims a decided turn nobody waits for and finishes it.
func (b *Bot) resumeOrphan(ctx context.Context, row *kairos.PendingApproval, dec kairos.Decision) {
	// Messages held for this request (hold.go) run after the turn.
	done := make(chan struct{})
	if _, busy := b.resuming.LoadOrStore(row.ID, done); busy {
		return // this process resumes it already (or did a moment ago)
	}
	defer func() {
		close(done)
		time.AfterFunc(time.Minute, func() { b.resuming.CompareAndDelete(row.ID, done) })
	}()
	ok, err := b.cfg.Approvals.ClaimApproval(ctx, row.ID, claimResumer)
	if err != nil || !ok {
		if err != nil {
			b.log.Warn("claim approval", "err", err)
		}
		return
	}
	if b.cfg.Resume == nil || len(row.State) == 0 {
		b.log.Warn("approved turn cannot be resumed", "approval", row.ID)
		return
	}
	b.log.Info("resuming a turn paused for approval", "approval", row.ID, "outcome", dec.Outcome)
	out := b.replier(row.UpdateID, rowInbound(row))
	// A turn of the chat: after the turns queued before it, never beside
	// another (park.go).
	err = b.InChat(ctx, row.ChatID, func(ctx context.Context) {
		if err := b.cfg.Resume(ctx, row.State, dec, out); err != nil {
			b.log.Error("resume approved turn", "approval", row.ID, "err", err)
		}
	})
	if err != nil {
		b.log.Error("resume approved turn", "approval", row.ID, "err", err)
	}
}

// expireOrphan expires a pending request nobody waits for: the keyboard
// is edited and the user told, once (whoever wins the conditional update).
func (b *Bot) expireOrphan(ctx context.Context, row *kairos.PendingApproval) {
	won, err := b.cfg.Approvals.DecideApproval(ctx, row.ID, kairos.DecisionExpired, "", b.cfg.Now())
	if err != nil || !won {
		if err != nil {
			b.log.Warn("expire approval", "err", err)
		}
		return
	}
	b.tellExpired(ctx, row)
}

// tellExpired finishes an expired request nobody continues: whoever
// claims it closes the keyboard and tells the user; the turn is not
// continued (no model call). The sweeper also finishes this way a request
// expired but never claimed (its expirer died, or failed to claim it).
func (b *Bot) tellExpired(ctx context.Context, row *kairos.PendingApproval) {
	if ok, err := b.cfg.Approvals.ClaimApproval(ctx, row.ID, claimExpiry); err != nil || !ok {
		if err != nil {
			b.log.Warn("claim expired approval", "err", err)
		}
		return
	}
	b.closeKeyboard(ctx, rowKeyboard(row), kairos.Decision{Outcome: kairos.DecisionExpired, At: row.ExpiresAt})
	action := row.Action
	if action == "" {
		action = "the action"
	}
	note := fmt.Sprintf("⌛ The approval request for %s expired before anyone answered, so I did not do it. Ask me again if you still want it.", action)
	if _, err := b.send(ctx, rowInbound(row), escape(note), nil); err != nil {
		b.log.Warn("tell expired approval", "err", err)
	}
}

// startApprovalSweeper finishes, now and every approvalSweep until the
// intake stops, the requests nobody waits for: decided ones are resumed,
// expired pending ones are expired. A sweep under way is a turn in flight
// (Shutdown drains it).
func (b *Bot) startApprovalSweeper(intake context.Context) {
	if b.cfg.Approvals == nil {
		return
	}
	ctx := b.work
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		for intake.Err() == nil && ctx.Err() == nil {
			b.sweepApprovals(ctx)
			_ = retry.Sleep(intake, approvalSweep)
		}
	}()
}

func (b *Bot) sweepApprovals(ctx context.Context) {
	now := b.cfg.Now()
	rows, err := b.cfg.Approvals.StaleApprovals(ctx, now.Add(-approvalStale))
	if err != nil {
		if ctx.Err() == nil {
			b.log.Warn("sweep approvals", "err", err)
		}
		return
	}
	for _, row := range rows {
		if b.waitsHere(row.ID) {
			continue // its waiter is alive in this process, only slow to beat
		}
		// A request parked here has its expiry here (park.go): it is
		// expired, and its turn resumed, by that timer.
		mine := b.expiresHere(row.ID)
		switch {
		case row.Status == kairos.ApprovalPending && !row.ExpiresAt.After(now):
			if !mine {
				b.expireOrphan(ctx, row)
			}
		case row.Status == kairos.ApprovalPending && row.MessageID == 0 && now.Sub(row.HeartbeatAt) > approvalReshow:
			b.reshowApproval(ctx, row)
		case row.Status == kairos.DecisionExpired && row.ClaimedBy == "":
			if !mine {
				b.tellExpired(ctx, row)
			}
		case row.Status != kairos.ApprovalPending && row.ClaimedBy == "":
			b.resumeOrphan(ctx, row, rowDecision(row))
		}
	}
}

// keyboardKey is the outbox key of a request's keyboard.
func keyboardKey(id string) string { return "ap:" + id }

// sendKeyboardOnce sends a request's keyboard with its intent recorded in
// the outbox first (when the bot has one): whoever records the intent
// sends it, once. It returns 0 and no error when the keyboard was already
// attempted elsewhere and its message id is not known.
func (b *Bot) sendKeyboardOnce(ctx context.Context, in *kairos.Inbound, id, text string, kb inlineKeyboard) (int64, error) {
	return b.outboxSend(ctx, in, keyboardKey(id), func(ctx context.Context) (int64, error) {
		return b.sendReserved(ctx, in, text, kb)
	})
}

// reshowApproval finishes the keyboard of a pending request whose asker
// died before recording the keyboard's message id. The outbox says what
// happened to the first send: sent (its id is recorded now), attempted
// with an unknown outcome (nothing is sent: a second keyboard is worse
// than a request that expires with a notice), or never attempted (the
// keyboard is sent, by the one replica whose intent is recorded first).
func (b *Bot) reshowApproval(ctx context.Context, row *kairos.PendingApproval) {
	st := b.cfg.Approvals
	if _, err := st.HeartbeatApproval(ctx, row.ID, b.cfg.Now()); err != nil {
		b.log.Warn("reshow approval", "err", err)
		return
	}
	kb := approvalKeyboard(row.ID, row.Grantable)
	msgID, err := b.sendKeyboardOnce(ctx, rowInbound(row), row.ID, row.Text, kb)
	if err != nil || msgID == 0 {
		if err != nil {
			b.log.Warn("reshow approval", "err", err)
		}
		return
	}
	open, err := st.SetApprovalMessage(ctx, row.ID, msgID, false)
	if err == nil && !open {
		if fresh, err := st.FindApproval(ctx, row.ID); err == nil {
			b.closeKeyboard(ctx, keyboardMsg{in: rowInbound(row), msgID: msgID, text: row.Text, zone: row.Zone}, rowDecision(fresh))
		}
	}
}

// withdrawApproval closes a request whose keyboard never went out: it is
// denied and claimed at once, so neither a press nor the sweeper acts on
// it.
func (b *Bot) withdrawApproval(ctx context.Context, id string) {
	st := b.cfg.Approvals
	if _, err := st.DecideApproval(ctx, id, kairos.DecisionDenied, "", b.cfg.Now()); err != nil {
		b.log.Warn("withdraw approval", "err", err)
		return
	}
	if _, err := st.ClaimApproval(ctx, id, claimWaiter); err != nil {
		b.log.Warn("withdraw approval", "err", err)
	}
}

// deliver hands a decision to a live waiter without ever blocking (the
// channel holds one; a waiter has one decision).
func deliver(ch chan kairos.Decision, dec kairos.Decision) {
	select {
	case ch <- dec:
	default:
	}
}
