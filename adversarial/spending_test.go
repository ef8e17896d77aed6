package adversarial

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// TestSpendingCaps tries to talk around the spending caps through the
// real binary: summaries made at the cap (long refused messages, then
// /newsession), half an hour of audio sent as a document or as a voice
// note that declares one second, audio whose length cannot be read, and a
// hop to the zone whose day began last. Each user has caps of their own.
// What must hold: no model or transcription request past the cap, and
// each refusal is one sentence.
func TestSpendingCaps(t *testing.T) {
	t.Parallel()
	r := newRig(t, "access:\n  allowed_users: [3801, 3802, 3803, 3804, 3805]\nbudgets:\n  spend:\n    per_user:\n"+
		"      \"3801\": {daily_tokens: 100}\n      \"3802\": {daily_usd: 0.006}\n      \"3803\": {daily_usd: 0.006}\n"+
		"      \"3804\": {monthly_usd: 5}\n      \"3805\": {daily_tokens: 100}\n")
	r.llm.SetHandler(func(req testkit.ChatRequest) testkit.Reply {
		return testkit.Reply{Text: "ok " + req.LastUserMessage(), Usage: &testkit.Usage{PromptTokens: 40, CompletionTokens: 5}}
	})
	r.llm.SetTranscriber(func(testkit.TranscriptionRequest) testkit.Reply { return testkit.TextReply("words") })
	r.start()
	var section tally
	atCap := func(user int64) {
		for _, text := range []string{"one", "two", "three"} {
			r.tg.PushText(user, user, text, time.Now())
			r.waitText(user, "ok "+text)
		}
	}
	none := func(name string, calls func() int, do func()) {
		before := calls()
		do()
		n := calls() - before
		section.add(name, n == 0, fmt.Sprintf("%d requests past the cap", n))
	}
	chats := func() int { return len(r.llm.Requests()) }
	transcriptions := func() int { return len(r.llm.TranscriptionRequests()) }

	atCap(3801)
	none("summaries of /newsession at the cap", chats, func() {
		long := "tell me everything " + strings.Repeat("about the weather in every town ", 100)
		for i := 1; i <= 2; i++ {
			r.tg.PushText(3801, 3801, long, time.Now())
			r.tg.PushText(3801, 3801, "/newsession", time.Now())
			waitCountText(r, 3801, "Started a new session", i)
		}
	})
	half := testkit.VoiceNote(30*time.Minute, 0)
	none("30 minutes of audio as a document", transcriptions, func() {
		r.tg.PushDocument(3802, 3802, r.tg.AddFile("documents", "lecture.ogg", "audio/ogg", half), "", time.Now())
		r.waitText(3802, "Transcribing that recording (30 min) would use $0.18")
	})
	none("a 30-minute voice note that declares 1 s", transcriptions, func() {
		r.tg.PushVoice(3803, 3803, r.tg.AddFile("voice", "v.oga", "audio/ogg", half), 1, time.Now())
		r.waitText(3803, "Transcribing that recording (30 min) would use $0.18")
	})
	none("audio whose length cannot be read", transcriptions, func() {
		r.tg.PushDocument(3804, 3804, r.tg.AddFile("documents", "x.mp3", "audio/mpeg", []byte(strings.Repeat("not an mp3 ", 500))), "", time.Now())
		r.waitText(3804, "I can't tell how long that recording is")
	})
	atCap(3805)
	none("a hop to the zone whose day began last", chats, func() {
		zone := newestDayZone(time.Now())
		r.tg.PushText(3805, 3805, "/clock tz "+zone, time.Now())
		r.waitText(3805, zone)
		r.tg.PushText(3805, 3805, "four", time.Now())
		r.waitText(3805, "You have reached your daily token limit of 100 tokens")
	})
	section.report(t, "spending caps")
}

// waitCountText waits until n messages to chat contain want.
func waitCountText(r *rig, chat int64, want string, n int) {
	r.t.Helper()
	deadline := testkit.GiveUpAt(r.t)
	for time.Now().Before(deadline) {
		got := 0
		for _, m := range r.tg.SentTo(chat) {
			if strings.Contains(m.LastText(), want) {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("chat %d never got %q %d times", chat, want, n)
}

// newestDayZone is the whole-hour zone whose day began last at now.
func newestDayZone(now time.Time) string {
	zone, since := "UTC", 25*time.Hour
	for off := -12; off <= 14; off++ {
		name := fmt.Sprintf("Etc/GMT%+d", -off)
		loc, err := time.LoadLocation(name)
		if err != nil {
			continue
		}
		l := now.In(loc)
		if d := l.Sub(time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)); d < since {
			zone, since = name, d
		}
	}
	return zone
}
