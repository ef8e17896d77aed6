package clockstate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// §6.2 A and §5.2: explicit directives.
func TestSection6_2_ParseDirective(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Directive
	}{
		{"clock it: I'm going to eat dinner", Directive{Kind: DirClockIt, Arg: "I'm going to eat dinner"}},
		{"Clock it - call the bank", Directive{Kind: DirClockIt, Arg: "call the bank"}},
		{"clock it", Directive{Kind: DirClockIt}},
		{"clock: paid invoice", Directive{Kind: DirClockIt, Arg: "paid invoice"}},
		{"  CLOCK:   paid   invoice  ", Directive{Kind: DirClockIt, Arg: "paid invoice"}},
		{"clock: kind project", Directive{Kind: DirKind, Arg: "project"}},
		{"clock: kind Scheduling", Directive{Kind: DirKind, Arg: "scheduling"}},
		{"clock: kind", Directive{Kind: DirKind}},
		{"clock: tz Asia/Tokyo", Directive{Kind: DirTZ, Arg: "Asia/Tokyo"}},
		{"clock: mode normal", Directive{Kind: DirMode, Arg: "normal"}},
		{"clock: done", Directive{Kind: DirDone}},
		{"clock: done gym", Directive{Kind: DirDone, Arg: "gym"}},
		{"clock: cancelled dinner", Directive{Kind: DirCancel, Arg: "dinner"}},
		{"heading to the gym, clock it", Directive{Kind: DirClockIt, Arg: "heading to the gym", Appended: true}},
		{"Calling mom now. Clock it!", Directive{Kind: DirClockIt, Arg: "Calling mom now", Appended: true}},
		{"what does clock it mean?", Directive{}},
		{"the clock: broken", Directive{}},
		{"hello", Directive{}},
		{"", Directive{}},
	} {
		if got := ParseDirective(tc.text); got != tc.want {
			t.Errorf("ParseDirective(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

func FuzzParseDirective(f *testing.F) {
	for _, s := range []string{"clock it: x", "clock: kind project", "a clock it", "clock:", "clock it", "clock: done gym",
		"I'm going to sleep", "brb", "after lunch I'll call the bank", "heading to the gym clock it"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := ParseDirective(s)
		switch d.Kind {
		case DirNone, DirClockIt, DirKind, DirTZ, DirMode, DirDone, DirCancel:
		default:
			t.Fatalf("kind %q", d.Kind)
		}
		if d.Kind == DirNone && d.Arg != "" {
			t.Fatalf("arg without directive: %+v", d)
		}
		if len(d.Arg) > maxDirectiveText {
			t.Fatalf("arg too long")
		}
		if a, ok := DetectTemporalAction(s); ok {
			if a.Label == "" || len(a.Label) > maxLabel+len("…")+len(" (after )")+40 || !utf8.ValidString(a.Label) && utf8.ValidString(s) {
				t.Fatalf("bad label %q", a.Label)
			}
			if a.Status != kairos.ActionPlanned && a.Status != kairos.ActionInProgress {
				t.Fatalf("status %q", a.Status)
			}
		}
		_ = IsAcknowledgement(s)
		if l := normalizeLabel(s); len(l) > maxLabel+len("…") {
			t.Fatalf("label %d bytes", len(l))
		}
	})
}

// §10.3: pure acknowledgements are not substantive.
func TestSection10_3_Acknowledgements(t *testing.T) {
	for _, s := range []string{"ok", "OK!", "okay.", "got it", "Got it, thanks!", "thanks", "thank you so much", "👍", "👍👍", "🙏", "ok 👍", "sure", "noted", "", "  "} {
		if !IsAcknowledgement(s) {
			t.Errorf("IsAcknowledgement(%q) = false", s)
		}
	}
	for _, s := range []string{"ok, the meeting is at 3pm", "Here is the plan: first…", "I scheduled it for tomorrow", "no", "got it — I will deploy at 5", "Done. I sent the email to Bob.", "Done."} {
		if IsAcknowledgement(s) {
			t.Errorf("IsAcknowledgement(%q) = true", s)
		}
	}
}

// §6.2 B and §6.5: temporal actions detected for auto-storage.
func TestSection6_2_DetectTemporalAction(t *testing.T) {
	for _, tc := range []struct {
		text               string
		label, activity, s string
	}{
		{"going to sleep", "Sleep", "sleep", kairos.ActionInProgress},
		{"ok I'm off to bed, good night", "Sleep", "sleep", kairos.ActionInProgress},
		{"gonna take a nap", "Nap", "sleep:nap", kairos.ActionInProgress},
		{"brb", "Be right back", "brb", kairos.ActionInProgress},
		{"back in 5 min", "Be right back", "brb", kairos.ActionInProgress},
		{"I'm heading to the gym", "Go to the gym", "exercise:gym", kairos.ActionInProgress},
		{"I’m headed to the gym", "Go to the gym", "exercise:gym", kairos.ActionInProgress},
		{"off to the dentist", "Go to the dentist", "appointment", kairos.ActionInProgress},
		{"going for a run", "Go for a run", "exercise:run", kairos.ActionInProgress},
		{"about to eat dinner", "Eat dinner", "meal:dinner", kairos.ActionPlanned},
		{"I'm going to chug 2 gallons of milk", "Chug 2 gallons of milk", "", kairos.ActionPlanned},
		{"I'm going to call the bank now", "Call the bank", "call", kairos.ActionPlanned},
		{"after lunch I'll call the bank", "Call the bank (after lunch)", "call", kairos.ActionPlanned},
		{"I'm having dinner", "Have dinner", "meal:dinner", kairos.ActionInProgress},
		{"stepping out", "Head out", "", kairos.ActionInProgress},
	} {
		got, ok := DetectTemporalAction(tc.text)
		if !ok || got.Label != tc.label || got.Activity != tc.activity || got.Status != tc.s {
			t.Errorf("DetectTemporalAction(%q) = %+v %v, want %q %q %q", tc.text, got, ok, tc.label, tc.activity, tc.s)
		}
	}
	// Non-temporal statements are not auto-stored (§6.2
	// require_explicit_clock_it_for_non_temporal).
	for _, text := range []string{"I like pizza", "my invoice is paid", "what is the capital of France?", "I'm going to be late",
		"I'm going to think about it", "the gym is closed", "I'm going to need help with this"} {
		if got, ok := DetectTemporalAction(text); ok {
			t.Errorf("DetectTemporalAction(%q) = %+v, want none", text, got)
		}
	}
}

// §6.3: a normalized short label, never the whole text.
func TestSection6_3_NormalizeLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"I'm going to eat dinner", "Eat dinner"},
		{"paid invoice", "Paid invoice"},
		{"  call   the bank now!! ", "Call the bank"},
		{"I will finish the report real quick", "Finish the report"},
	} {
		if got := normalizeLabel(tc.in); got != tc.want {
			t.Errorf("normalizeLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := normalizeLabel(strings.Repeat("write the quarterly report for the board ", 10))
	if len(long) > maxLabel+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("long label %q (%d bytes)", long, len(long))
	}
}
