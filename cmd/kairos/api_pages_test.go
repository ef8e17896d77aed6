package main

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

// TestAPISchedulesPageWithCursor: GET /api/v1/schedules pages with limit
// and cursor like the other lists (it took limit only, so schedules past
// the first page could not be read), of every user or one.
func TestAPISchedulesPageWithCursor(t *testing.T) {
	e := newEnv(t)
	at := time.Now().Add(24 * time.Hour).Truncate(time.Minute)
	var seed []*kairos.Schedule
	for i := range 7 {
		user := int64(2002 + i%2)
		seed = append(seed, &kairos.Schedule{UserID: user, ChatID: user, ThreadKey: kairos.ThreadKey(kairos.ChannelTelegram, kairos.ChatDM, user, user, 0),
			Kind: kairos.ScheduleReminder, Text: fmt.Sprintf("r%d", i), TZ: "UTC",
			NextRun: at.Add(time.Duration(i/2) * time.Hour), Start: at.Format("2006-01-02T15:04:05")})
	}
	e.seedSchedules(t, seed...)
	read := e.apiToken(t, "read", "pages")
	base := "http://" + e.start() + "/api/v1/schedules?limit=3"
	walk := func(u string) (texts []string, pages int) {
		cursor := ""
		for {
			q := u
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			code, body := apiCall(t, "GET", q, read, "", nil)
			if code != 200 {
				t.Fatalf("%s: %d %v", q, code, body)
			}
			pages++
			for _, it := range body["items"].([]any) {
				texts = append(texts, it.(map[string]any)["text"].(string))
			}
			next, _ := body["next_cursor"].(string)
			if next == "" {
				return texts, pages
			}
			cursor = next
		}
	}
	if texts, pages := walk(base); fmt.Sprint(texts) != "[r0 r1 r2 r3 r4 r5 r6]" || pages != 3 {
		t.Fatalf("every user: %v on %d pages", texts, pages)
	}
	if texts, _ := walk(base + "&user_id=2003"); fmt.Sprint(texts) != "[r1 r3 r5]" {
		t.Fatalf("user 2003: %v", texts)
	}
	if code, body := apiCall(t, "GET", base+"&cursor=nope", read, "", nil); code != 400 {
		t.Fatalf("a forged cursor: %d %v", code, body)
	}
}
