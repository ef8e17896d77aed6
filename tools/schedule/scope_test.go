package schedule_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// Cancel looks the id up among the caller's own schedules of the thread
// before anything is read: another user's id (or one of the caller's
// in another thread) is "not found", and neither the approval nor the
// error carries its text or time. Ids are random, not sequential.
func TestCancelScopedToOwnThread(t *testing.T) {
	ctx := context.Background()
	tool, st := newTool(t, "UTC")
	res, err := tool.Call(ctx, inv(`{"action":"create","when":"2026-11-25T09:00:00Z","text":"secret pharmacy pickup"}`, false))
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, res)
	res2, err := tool.Call(ctx, inv(`{"action":"create","when":"2026-11-25T10:00:00Z","text":"y"}`, false))
	if err != nil {
		t.Fatal(err)
	}
	if id2 := createdID(t, res2); id2 == id || strings.HasPrefix(id2, id[:8]) {
		t.Fatalf("ids look related: %s %s", id, id2)
	}
	s, err := st.OwnSchedule(ctx, id, kairos.ScheduleScope{UserID: 7})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*kairos.ToolInvocation{
		"another user":            other(inv(`{"action":"cancel","schedule_id":"`+id+`"}`, false), 8, kairos.ChatDM),
		"another user, row id":    other(inv(`{"action":"cancel","schedule_id":`+itoa(s.ID)+`}`, false), 8, kairos.ChatDM),
		"own id, another thread":  other(inv(`{"action":"cancel","schedule_id":"`+id+`"}`, false), 7, kairos.ChatGroup),
		"own row id (not public)": inv(`{"action":"cancel","schedule_id":`+itoa(s.ID)+`}`, false),
	} {
		t.Run(name, func(t *testing.T) {
			act, err := tool.Action(ctx, in)
			if err != nil || act.Impactful || strings.Contains(act.Reason, "pharmacy") || strings.Contains(act.Reason, "09:00") {
				t.Fatalf("action %+v %v", act, err)
			}
			_, err = tool.Call(ctx, in)
			if kairos.ErrorCode(err) != kairos.ENOTFOUND || strings.Contains(err.Error(), "pharmacy") || strings.Contains(err.Error(), "09:00") {
				t.Fatalf("call: %v", err)
			}
		})
	}
	if got, _ := st.OwnSchedule(ctx, id, kairos.ScheduleScope{UserID: 7}); got == nil || got.Status != kairos.ScheduleActive {
		t.Fatalf("the schedule changed: %+v", got)
	}
}

func other(in *kairos.ToolInvocation, user int64, kind string) *kairos.ToolInvocation {
	in.UserKey = kairos.UserKey(kairos.ChannelTelegram, user)
	chat := user
	if kind == kairos.ChatGroup {
		chat = -100
	}
	in.ThreadKey = kairos.ThreadKey(kairos.ChannelTelegram, kind, chat, user, 0)
	return in
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
