package bot

import (
	"context"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/kairos-agent/kairos"
)

// TestPressRefusal: who may decide and with which scope, over every
// combination of presser, grantable request and choice.
func TestPressRefusal(t *testing.T) {
	p := kairos.DefaultPolicy()
	p.Access.Operators = []int64{9}
	const asked = int64(1)
	for _, from := range []int64{asked, 2, 9} {
		for _, grantable := range []bool{false, true} {
			for choice, cs := range choiceScope {
				got := pressRefusal(p, from, asked, grantable, cs.scope)
				want := from == asked || from == 9 // who may decide at all
				if cs.scope != kairos.GrantOnce {
					want = want && grantable && from == asked
				}
				if (got == "") != want {
					t.Errorf("from %d grantable %v choice %s: refusal %q", from, grantable, choice, got)
				}
			}
		}
	}
}

// FuzzParseApprovalData: whatever a callback carries, an accepted one is
// exactly "ap:<id>:<choice>" with a known choice and no colon in the id.
func FuzzParseApprovalData(f *testing.F) {
	for _, s := range []string{"ap:0123abcd:y", "ap:0123abcd:a", "ap::y", "ap:x:z", "ap:a:b:c", "sk:1", "ap:ab:h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		id, choice, ok := parseApprovalData(data)
		if !ok {
			return
		}
		if _, known := choiceScope[choice]; !known || id == "" || strings.Contains(id, ":") || data != "ap:"+id+":"+choice {
			t.Fatalf("%q parsed as id %q choice %q", data, id, choice)
		}
	})
}

// TestDependsOn: a reply to the request or to the asking message, or a
// bare yes/no by the asked user, depends on the pending request; a
// command, other text, and another user's yes do not.
func TestDependsOn(t *testing.T) {
	rows := []*kairos.PendingApproval{{ID: "r1", UserID: 1, MessageID: 50, SourceMessageID: 49}}
	msg := func(from int64, text string, replyTo int) *models.Message {
		m := &models.Message{From: &models.User{ID: from}, Text: text}
		if replyTo != 0 {
			m.ReplyToMessage = &models.Message{ID: replyTo}
		}
		return m
	}
	for _, tc := range []struct {
		m    *models.Message
		want bool
	}{
		{msg(1, "and then?", 50), true},
		{msg(1, "why?", 49), true},
		{msg(1, "Yes!", 0), true},
		{msg(1, "no", 0), true},
		{msg(2, "yes", 0), false},
		{msg(1, "what's the time?", 0), false},
		{msg(1, "/memory", 50), false},
		{msg(1, "hello", 48), false},
	} {
		if got := dependsOn(tc.m, rows) != nil; got != tc.want {
			t.Errorf("%q (reply to %v, from %d): depends %v, want %v", tc.m.Text, tc.m.ReplyToMessage, tc.m.From.ID, got, tc.want)
		}
	}
}

// countingApprovals counts the reads of a chat's pending requests.
type countingApprovals struct {
	kairos.ApprovalStore
	reads int
}

func (c *countingApprovals) PendingApprovalsInChat(ctx context.Context, chatID int64) ([]*kairos.PendingApproval, error) {
	c.reads++
	return c.ApprovalStore.PendingApprovalsInChat(ctx, chatID)
}

// TestHoldReadsOnlyWhenItMayDepend: only a message that could depend on
// a pending request (a reply, a bare answer word) makes the hold check
// read the chat's requests; a plain message, a command or a non-message
// costs no read. Every message dependsOn would hold passes mayDepend.
func TestHoldReadsOnlyWhenItMayDepend(t *testing.T) {
	b, updates := storeBot(t, Config{ParkApprovals: true})
	counting := &countingApprovals{ApprovalStore: updates}
	b.cfg.Approvals = counting
	rows := []*kairos.PendingApproval{{ID: "r1", UserID: 1, MessageID: 50, SourceMessageID: 49}}
	ctx := context.Background()
	texts := []string{"hello", "what's the time?", "yes", "Yes!", "no.", "ok", "/memory", "yes please", " nope ", "do it", ""}
	for i, text := range texts {
		for _, reply := range []int{0, 48, 49, 50} {
			m := &models.Message{From: &models.User{ID: 1}, Chat: models.Chat{ID: 7}, Text: text}
			if reply != 0 {
				m.ReplyToMessage = &models.Message{ID: reply}
			}
			before := counting.reads
			u := &kairos.RawUpdate{UpdateID: int64(i*10 + reply), ChatID: 7}
			if b.holdIfDepends(ctx, u, m) {
				t.Fatalf("%q held with no pending request", text)
			}
			read := counting.reads > before
			if read != mayDepend(m) {
				t.Errorf("%q (reply to %d): read the chat's requests %v, may depend %v", text, reply, read, mayDepend(m))
			}
			if dependsOn(m, rows) != nil && !mayDepend(m) {
				t.Errorf("%q (reply to %d) depends on a request but the hold check would skip it", text, reply)
			}
			if plain := reply == 0 && !answerWords[answerWord(text)]; plain && read {
				t.Errorf("plain message %q read the chat's requests", text)
			}
		}
	}
	if b.holdIfDepends(ctx, &kairos.RawUpdate{UpdateID: 999}, nil) {
		t.Fatal("a non-message held")
	}
}
