package bot_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/internal/testkit"
)

var callbackID = regexp.MustCompile(`"callback_data":"ap:([0-9a-f]+):y"`)

// persistedApprover is a handler whose turn asks for approval with a
// state, so the request is persisted; it reports Approve's outcome.
func persistedApprover(res chan<- error, decided chan<- kairos.Decision) handler {
	return handler{func(ctx context.Context, in *kairos.Inbound, out kairos.Replier) error {
		d, err := out.Approve(ctx, &kairos.ApprovalRequest{ID: "c1", Action: "memory.forget", Summary: "forget", Reason: "deletes data",
			ExpiresAt: time.Now().Add(time.Minute), State: []byte(`{"v":1}`)})
		res <- err
		if err != nil {
			return nil
		}
		decided <- d
		return out.Final(ctx, "decision: "+d.Outcome)
	}}
}

// TestPersistedApprovalPressReachesWaiter: a press in the waiting process
// decides the row once, and the waiter claims the continuation.
func TestPersistedApprovalPressReachesWaiter(t *testing.T) {
	res, decided := make(chan error, 1), make(chan kairos.Decision, 1)
	f := start(t, persistedApprover(res, decided), func(c *bot.Config) { c.Approvals = c.Updates.(kairos.ApprovalStore) })
	f.tg.PushText(1, 1, "forget it", time.Now())
	kb := f.tg.MustWaitSentTo(1, 1)[0]
	id := callbackID.FindStringSubmatch(string(kb.ReplyMarkup))[1]
	if _, err := f.tg.PressButton(1, 1, "Deny"); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if d := <-decided; d.Outcome != kairos.DecisionDenied || d.By != "telegram:1" {
		t.Fatalf("decision %+v", d)
	}
	f.tg.MustWaitSentTo(1, 2)
	row, err := f.updates.FindApproval(context.Background(), id)
	if err != nil || row.Status != kairos.DecisionDenied || row.ClaimedBy != "waiter" || row.MessageID != int64(kb.MessageID) {
		t.Fatalf("row %+v, %v", row, err)
	}
	// The waiter may continue (it polls the row) before the pressing
	// goroutine's edit lands: the keyboard must close, in either order.
	if err := f.tg.WaitUntil(testkit.Deadline(t), func() bool { return len(f.tg.SentTo(1)[0].Buttons()) == 0 }); err != nil {
		t.Fatalf("keyboard still offers %q", f.tg.SentTo(1)[0].Buttons())
	}
}

// TestPersistedApprovalHandedOff: when another process decided and
// claimed the turn (it thought this waiter dead), the waiter stops the
// turn without answering.
func TestPersistedApprovalHandedOff(t *testing.T) {
	res, decided := make(chan error, 1), make(chan kairos.Decision, 1)
	f := start(t, persistedApprover(res, decided), func(c *bot.Config) { c.Approvals = c.Updates.(kairos.ApprovalStore) })
	f.tg.PushText(1, 1, "forget it", time.Now())
	kb := f.tg.MustWaitSentTo(1, 1)[0]
	id := callbackID.FindStringSubmatch(string(kb.ReplyMarkup))[1]
	ctx := context.Background()
	testkit.WaitFor(t, "the request to be persisted", func() bool {
		_, err := f.updates.FindApproval(ctx, id)
		return err == nil
	})
	if ok, err := f.updates.DecideApproval(ctx, id, kairos.DecisionApproved, "telegram:1", time.Now()); !ok || err != nil {
		t.Fatalf("decide: %v, %v", ok, err)
	}
	if ok, err := f.updates.ClaimApproval(ctx, id, "resumer"); !ok || err != nil {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, kairos.ErrHandedOff) {
			t.Fatalf("Approve returned %v, want ErrHandedOff", err)
		}
	case <-testkit.Deadline(t).Done():
		t.Fatal("the waiter never noticed the decision")
	}
	if n := len(f.tg.SentTo(1)); n != 1 {
		t.Fatalf("%d messages; the handed-off turn must not answer", n)
	}
}

// TestApprovalKeyboardResentAfterAskerDied: a process stored a request
// and died before its keyboard went out (no message id, no heartbeat for
// 30 s): the sweeper sends the keyboard, and an Approve resumes the turn
// from the row once.
func TestApprovalKeyboardResentAfterAskerDied(t *testing.T) {
	resumed := make(chan kairos.Decision, 2)
	f := start(t, echo(), func(c *bot.Config) {
		c.Approvals = c.Updates.(kairos.ApprovalStore)
		c.Resume = func(ctx context.Context, state []byte, dec kairos.Decision, out kairos.Replier) error {
			resumed <- dec
			return out.Final(ctx, "resumed: "+string(state))
		}
	})
	ctx := context.Background()
	row := &kairos.PendingApproval{ID: "0123456789abcdef", ChatID: 1, ChatKind: kairos.ChatDM, UserID: 1, Action: "memory.forget",
		Text: "<b>Approval needed</b>\nforget", State: []byte(`{"v":1}`), ExpiresAt: time.Now().Add(time.Hour)}
	if err := f.updates.CreateApproval(ctx, row, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.updates.HeartbeatApproval(ctx, row.ID, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	kb := f.tg.MustWaitSentTo(1, 1)[0]
	if b := kb.Buttons(); len(b) != 2 || b[0] != "Approve" {
		t.Fatalf("resent keyboard %q", b)
	}
	if _, err := f.tg.PressButton(1, 1, "Approve"); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-resumed:
		if d.Outcome != kairos.DecisionApproved {
			t.Fatalf("resumed with %+v", d)
		}
	case <-testkit.Deadline(t).Done():
		t.Fatal("the turn was not resumed")
	}
	f.tg.MustWaitSentTo(1, 2)
	got, err := f.updates.FindApproval(ctx, row.ID)
	if err != nil || got.MessageID != int64(kb.MessageID) || got.ClaimedBy != "resumer" {
		t.Fatalf("row %+v %v", got, err)
	}
	if n := len(f.tg.SentTo(1)); n != 2 {
		t.Fatalf("%d messages, want the keyboard and the resumed answer", n)
	}
}

// TestApprovalKeyboardNotResentWhenFirstWentOut: askers that died after
// their keyboard's send began (recorded in the outbox) but before the
// request had its message id. The sweeper sends no second keyboard: it
// records the id when the outbox has it, and sends nothing when the
// send's outcome is unknown.
func TestApprovalKeyboardNotResentWhenFirstWentOut(t *testing.T) {
	f := start(t, echo(), func(c *bot.Config) { c.Approvals = c.Updates.(kairos.ApprovalStore) })
	ctx := context.Background()
	created := time.Now().Add(-2 * time.Minute)
	ids := []string{"00000000000000a1", "00000000000000a2"} // unknown outcome, sent (swept in this order)
	for i, id := range ids {
		row := &kairos.PendingApproval{ID: id, ChatID: 1, ChatKind: kairos.ChatDM, UserID: 1, Action: "memory.forget",
			Text: "<b>Approval needed</b>\nforget", State: []byte(`{"v":1}`), ExpiresAt: time.Now().Add(time.Hour),
			CreatedAt: created.Add(time.Duration(i) * time.Second)}
		if err := f.updates.CreateApproval(ctx, row, false); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.updates.BeginSend(ctx, "ap:"+id, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.updates.MarkSent(ctx, "ap:"+ids[1], 777); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := f.updates.HeartbeatApproval(ctx, id, time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	var got *kairos.PendingApproval
	if err := testkit.Poll(testkit.Deadline(t), func() bool {
		var err error
		if got, err = f.updates.FindApproval(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		return got.MessageID == 777
	}); err != nil {
		t.Fatalf("the sent keyboard's id was never recorded: %+v", got)
	}
	if sent := f.tg.SentTo(1); len(sent) != 0 {
		t.Fatalf("%d keyboards sent again, want none", len(sent))
	}
	if got, err := f.updates.FindApproval(ctx, ids[0]); err != nil || got.MessageID != 0 || got.Status != kairos.ApprovalPending {
		t.Fatalf("unknown send's request %+v %v, want pending without a message", got, err)
	}
}

// TestApprovalExpiredUnclaimedIsToldNotResumed: a request expired by a
// waiter that died before claiming its continuation is finished by the
// sweeper like any request that expired with nobody waiting: the user is
// told, and the turn is not continued (no model call).
func TestApprovalExpiredUnclaimedIsToldNotResumed(t *testing.T) {
	resumed := make(chan kairos.Decision, 2)
	f := start(t, echo(), func(c *bot.Config) {
		c.Approvals = c.Updates.(kairos.ApprovalStore)
		c.Resume = func(ctx context.Context, state []byte, dec kairos.Decision, out kairos.Replier) error {
			resumed <- dec
			return out.Final(ctx, "resumed with "+dec.Outcome)
		}
	})
	ctx := context.Background()
	row := &kairos.PendingApproval{ID: "00000000000000b1", ChatID: 1, ChatKind: kairos.ChatDM, UserID: 1, Action: "memory.forget",
		Text: "<b>Approval needed</b>\nforget", State: []byte(`{"v":1}`), ExpiresAt: time.Now().Add(time.Second)}
	if err := f.updates.CreateApproval(ctx, row, false); err != nil {
		t.Fatal(err)
	}
	if won, err := f.updates.DecideApproval(ctx, row.ID, kairos.DecisionExpired, "", time.Now()); err != nil || !won {
		t.Fatalf("expire: %v %v", won, err)
	}
	if _, err := f.updates.HeartbeatApproval(ctx, row.ID, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	sent := f.tg.MustWaitSentTo(1, 1)
	if got := sent[0].LastText(); !regexp.MustCompile(`expired before anyone answered`).MatchString(got) {
		t.Fatalf("sent %q, want the expiry notice", got)
	}
	select {
	case d := <-resumed:
		t.Fatalf("the expired turn was resumed with %+v", d)
	default:
	}
	if got, err := f.updates.FindApproval(ctx, row.ID); err != nil || got.ClaimedBy != "expiry" {
		t.Fatalf("row %+v %v, want claimed by the expiry", got, err)
	}
}
