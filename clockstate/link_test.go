package clockstate_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store/storetest"
)

var linkCodeRe = regexp.MustCompile(`/clock link (\d{6})`)

// TestSection7_LinkCodeSurvivesRestart: a /clock link code made before a
// restart (a new wrapper on the same database) still links; it works
// once, not from the identity that made it, and not after it expired.
func TestSection7_LinkCodeSurvivesRestart(t *testing.T) {
	db := storetest.MustOpenDB(t)
	before := newHarnessDB(t, db, nil)
	made, err := before.w.ClockCommand(before.ctx, dm(1, "", t0), "link")
	m := linkCodeRe.FindStringSubmatch(made)
	if err != nil || m == nil {
		t.Fatalf("link = %q, %v", made, err)
	}
	code := m[1]
	after := newHarnessDB(t, db, nil) // the process restarted
	if _, err := after.w.ClockCommand(after.ctx, dm(1, "", t0.Add(time.Minute)), "link "+code); kairos.ErrorCode(err) != kairos.EINVALID ||
		!strings.Contains(kairos.ErrorMessage(err), "other channel") {
		t.Fatalf("the same identity used its own code: %v", err)
	}
	other := &kairos.Inbound{Channel: kairos.ChannelCLI, ChatID: 77, ChatKind: kairos.ChatDM, UserID: 77, Date: t0.Add(2 * time.Minute)}
	got, err := after.w.ClockCommand(after.ctx, other, "link "+code)
	if err != nil || !strings.Contains(got, "Linked") {
		t.Fatalf("link after restart = %q, %v", got, err)
	}
	if _, err := after.w.ClockCommand(after.ctx, other, "link "+code); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a used code worked again: %v", err)
	}
	made, _ = after.w.ClockCommand(after.ctx, dm(2, "", t0), "link")
	late := &kairos.Inbound{Channel: kairos.ChannelCLI, ChatID: 78, ChatKind: kairos.ChatDM, UserID: 78, Date: t0.Add(11 * time.Minute)}
	after.host = t0.Add(11 * time.Minute) // codes expire on the host clock
	if got, err := after.w.ClockCommand(after.ctx, late, "link "+linkCodeRe.FindStringSubmatch(made)[1]); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("an expired code worked: %q, %v (made: %q)", got, err, made)
	}
}
