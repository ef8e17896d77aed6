package clockstate_test

import "testing"

// The envelope uses the same parser as `kairos clock parse` and the
// schedule tool (wrapper.go calls parseAnchored): a time found in a
// message appears as the absolute instant in the Session TZ with its
// phrase (§11), or as the clarification question, never as a silent guess.
func TestEnvelope_TimesInMessagesUseTheParser(t *testing.T) {
	for _, tc := range []struct {
		name, text, tz string
		want           []string
	}{
		// t0 is Monday 2026-02-09 10:00 in Tokyo.
		{"tomorrow at 5pm", "call me tomorrow at 5pm", "Asia/Tokyo",
			[]string{`"tomorrow at 5pm" = 2026-02-10T17:00:00+09:00 (Asia/Tokyo)`}},
		{"written date with time", "the review is on June 3rd 2027 at 8:15am", "Asia/Tokyo",
			[]string{`= 2027-06-03T08:15:00+09:00 (Asia/Tokyo)`}},
		// A time stated in another zone, shown in the Session TZ.
		{"5pm in London from Sydney", "let's talk 5pm in London", "Australia/Sydney",
			[]string{`= 2026-02-10T04:00:00+11:00 (Australia/Sydney)`}},
		// A zone stated in the message is the Session TZ (§4.2 step 1).
		{"range in UTC", "the window is 14:00 UTC - 16:30 UTC", "Asia/Tokyo",
			[]string{`"14:00 UTC - 16:30 UTC" = 2026-02-09T14:00:00+00:00 to 2026-02-09T16:30:00+00:00 (UTC)`}},
		{"ambiguous abbreviation", "call me at 5pm IST", "Europe/Berlin",
			[]string{`is ambiguous; ask:`, `"IST"`}},
		{"ambiguous slash date", "due on 03/04/2027", "Asia/Tokyo",
			[]string{`is ambiguous; ask: Do you mean 3 April or 4 March?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			in := dm(1, tc.text, t0)
			h.setTZ(in, tc.tz)
			env := h.send(in)
			mustContain(t, env.Text, tc.want...)
		})
	}
}
