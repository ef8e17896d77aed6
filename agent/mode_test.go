package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		text   string
		kind   string
		reason string
	}{
		// Actions: imperatives.
		{"Delete the draft.", KindAction, `imperative "delete"`},
		{"run the tests", KindAction, `imperative "run"`},
		{"Send the report to Anna", KindAction, `imperative "send"`},
		{"please store this: my passport expires in May", KindAction, `imperative "store"`},
		{"Forget what I said about Bob", KindAction, `imperative "forget"`},
		{"Kairos, deploy it now", KindAction, `imperative "deploy"`},
		{"ok now publish the post!", KindAction, `imperative "publish"`},
		{"Remind me to call mum at 6", KindAction, `imperative "remind"`},
		{"@kairos_bot execute this script", KindAction, `imperative "execute"`},
		{"stop the job", KindAction, `imperative "stop"`},
		{"No, delete the other one", KindAction, `imperative "delete"`},
		{"Thanks! Now remove the old notes.", KindAction, `imperative "remove"`},
		// Actions: polite and indirect requests, go-aheads.
		{"Can you send it to the team?", KindAction, `polite request "send"`},
		{"could you please delete my last memory?", KindAction, `polite request "delete"`},
		{"I want you to run the migration", KindAction, `polite request "run"`},
		{"I'd like you to save this", KindAction, `polite request "save"`},
		{"go ahead and deploy", KindAction, `go-ahead "deploy"`},
		{"let's deploy", KindAction, `let's "deploy"`},
		{"Go ahead", KindAction, "go-ahead"},
		{"yes, do it", KindAction, "go-ahead"},
		{"proceed", KindAction, "go-ahead"},
		// Coordination: questions.
		{"What's the status of the deploy?", KindCoordination, "question"},
		{"should I delete the old notes?", KindCoordination, "question"},
		{"how do I deploy this", KindCoordination, "question"},
		{"why did you forget my birthday", KindCoordination, "question"},
		{"delete it?", KindCoordination, "question"},
		{"can you?", KindCoordination, "question"},
		// Coordination: planning and discussion.
		{"I have an idea for the launch", KindCoordination, `planning language "idea"`},
		{"let's think about the migration", KindCoordination, "planning language"},
		{"We need a plan before we touch prod", KindCoordination, `planning language "plan"`},
		// Coordination: read-only requests.
		{"search for flights to Lisbon", KindCoordination, `read-only request "search"`},
		{"Can you explain the error?", KindCoordination, `read-only request "explain"`},
		{"show me my open loops", KindCoordination, `read-only request "show"`},
		{"summarize yesterday", KindCoordination, `read-only request "summarize"`},
		// Coordination: negations, statements, nothing.
		{"don't delete anything", KindCoordination, "negated request"},
		{"Do not send it yet", KindCoordination, "negated request"},
		{"never post on my behalf", KindCoordination, "negated request"},
		{"stop sending me reminders", KindCoordination, "negated request"},
		{"I'm about to send the invoice", KindCoordination, "no request to act"},
		{"the weather is nice", KindCoordination, "no request to act"},
		{"thanks!", KindCoordination, "greeting or filler"},
		{"", KindCoordination, "empty message"},
		{"   \n ", KindCoordination, "empty message"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got := Classify(tc.text)
			if got.Kind != tc.kind || got.Reason != tc.reason {
				t.Errorf("Classify(%q) = %s (%s), want %s (%s)", tc.text, got.Kind, got.Reason, tc.kind, tc.reason)
			}
			if (got.Kind == KindAction) != (got.Verb != "") {
				t.Errorf("Verb %q with kind %s", got.Verb, got.Kind)
			}
		})
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"delete it", "Can you send it?", "", "’’’", "go ahead and", "i want you to", "let us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Classify(s)
		if c.Kind != KindAction && c.Kind != KindCoordination || c.Reason == "" {
			t.Fatalf("Classify(%q) = %+v", s, c)
		}
	})
}

func TestTransitionTable(t *testing.T) {
	type variant struct {
		name string
		in   TransitionInput
	}
	variants := []variant{
		{"plain", TransitionInput{}},
		{"token", TransitionInput{ApprovalToken: "appr-1"}},
		{"summary", TransitionInput{Summary: "stored 2 memories"}},
		{"token+summary", TransitionInput{ApprovalToken: "appr-1", Summary: "stored 2 memories"}},
		{"blank token+summary", TransitionInput{ApprovalToken: "  ", Summary: " \n"}},
		{"reset", TransitionInput{Reset: true}},
		{"timeout", TransitionInput{Timeout: true}},
	}
	// want[from→to] lists, per variant in the order above, "ok:<cause>"
	// or "<code>:<rule>".
	const (
		same  = "invalid:" + RuleSameMode
		reset = "invalid:" + RuleResetTarget
	)
	want := map[string][7]string{
		"DISCUSS→DISCUSS":   {same, same, same, same, same, "ok:reset", "ok:timeout"},
		"DISCUSS→DIAGNOSE":  {"ok:advance", "ok:advance", "ok:advance", "ok:advance", "ok:advance", reset, reset},
		"DISCUSS→EXECUTE":   {"invalid:diagnose-first", "invalid:diagnose-first", "invalid:diagnose-first", "invalid:diagnose-first", "invalid:diagnose-first", reset, reset},
		"DIAGNOSE→DISCUSS":  {"invalid:no-backward-step", "invalid:no-backward-step", "invalid:no-backward-step", "invalid:no-backward-step", "invalid:no-backward-step", "ok:reset", "ok:timeout"},
		"DIAGNOSE→DIAGNOSE": {same, same, same, same, same, reset, reset},
		"DIAGNOSE→EXECUTE":  {"forbidden:execute-approval", "ok:approved", "forbidden:execute-approval", "ok:approved", "forbidden:execute-approval", reset, reset},
		"EXECUTE→DISCUSS":   {"invalid:exit-summary", "invalid:exit-summary", "ok:exit", "ok:exit", "invalid:exit-summary", "ok:reset", "ok:timeout"},
		"EXECUTE→DIAGNOSE":  {"invalid:exit-to-discuss", "invalid:exit-to-discuss", "invalid:exit-to-discuss", "invalid:exit-to-discuss", "invalid:exit-to-discuss", reset, reset},
		"EXECUTE→EXECUTE":   {same, same, same, same, same, reset, reset},
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, from := range Modes {
		for _, to := range Modes {
			key := string(from) + "→" + string(to)
			for i, v := range variants {
				t.Run(key+"/"+v.name, func(t *testing.T) {
					in := v.in
					in.Actor, in.At = "tg:1", at
					mt, err := Transition(from, to, in)
					got := ""
					if err != nil {
						rule := strings.TrimPrefix(kairos.ErrorMessage(err), "mode rule ")
						rule, _, _ = strings.Cut(rule, ":")
						got = kairos.ErrorCode(err) + ":" + rule
						if mt != (ModeTransition{}) {
							t.Errorf("refused transition returned %+v", mt)
						}
					} else {
						got = "ok:" + mt.Cause
						if mt.From != from || mt.To != to || mt.Actor != "tg:1" || !mt.At.Equal(at) || mt.ApprovalToken != in.ApprovalToken {
							t.Errorf("transition fields not copied: %+v", mt)
						}
					}
					if got != want[key][i] {
						t.Errorf("Transition(%s) with %s = %s (%v), want %s", key, v.name, got, err, want[key][i])
					}
				})
			}
		}
	}
}

func TestTransitionUnknownMode(t *testing.T) {
	for _, pair := range [][2]Mode{{"", ModeDiscuss}, {ModeDiscuss, "PANIC"}, {"discuss", ModeDiagnose}} {
		_, err := Transition(pair[0], pair[1], TransitionInput{Reset: true})
		if kairos.ErrorCode(err) != kairos.EINVALID || !strings.Contains(kairos.ErrorMessage(err), RuleUnknownMode) {
			t.Errorf("Transition(%q, %q) = %v", pair[0], pair[1], err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"discuss": ModeDiscuss, " Diagnose ": ModeDiagnose, "EXECUTE": ModeExecute} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("run"); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("ParseMode(run) err = %v", err)
	}
}

// TestNextModesAgreeWithTransition: every mode NextModes offers is
// reachable with what it says is needed, and nothing else is reachable
// without a reset.
func TestNextModesAgreeWithTransition(t *testing.T) {
	full := TransitionInput{ApprovalToken: "t", Summary: "s"}
	for _, from := range Modes {
		next := NextModes(from)
		for _, to := range Modes {
			_, err := Transition(from, to, full)
			if _, offered := next[to]; offered != (err == nil) {
				t.Errorf("%s→%s: offered %v, Transition error %v", from, to, offered, err)
			}
		}
	}
}

func ExampleTransition() {
	_, err := Transition(ModeDiscuss, ModeExecute, TransitionInput{ApprovalToken: "a1"})
	fmt.Println(kairos.ErrorCode(err), kairos.ErrorMessage(err))
	mt, _ := Transition(ModeDiagnose, ModeExecute, TransitionInput{Actor: "tg:42", ApprovalToken: "a1"})
	fmt.Println(mt.From, "→", mt.To, mt.Cause)
	// Output:
	// invalid mode rule diagnose-first: DISCUSS cannot go straight to EXECUTE; move to DIAGNOSE first
	// DIAGNOSE → EXECUTE approved
}

func ExampleClassify() {
	fmt.Println(Classify("Could you delete my old notes?"))
	fmt.Println(Classify("Should we delete the old notes?"))
	// Output:
	// {action polite request "delete" delete}
	// {coordination question }
}
