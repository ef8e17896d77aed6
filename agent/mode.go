package agent

// Mode gate (seed 002, "S-mode"): message classification and the
// DISCUSS → DIAGNOSE → EXECUTE machine. Everything in this file is a pure
// function: no I/O, no clock, no state. The loop stores a thread's mode and
// feeds Transition what happened.
//
// Decisions where the seed is silent:
//
//   - Classify uses fixed heuristics, not a model (the seed's classifier
//     also uses a hard-coded set). See Classify for the rule.
//   - A transition to the mode one is already in is refused (EINVALID,
//     rule "same-mode"), except DISCUSS→DISCUSS on reset or timeout, which
//     is how an idle thread is put back to rest.
//   - Leaving EXECUTE normally needs a summary (the seed's Part IV asked
//     to decide; Kairos enforces it). Reset and timeout need none.
//   - Reset and timeout lead only to DISCUSS; asking for another target
//     with Reset or Timeout set is EINVALID.
//   - Errors: a path the machine forbids (DISCUSS→EXECUTE, EXECUTE→DIAGNOSE,
//     DIAGNOSE→DISCUSS, same mode, unknown mode) is EINVALID; a valid path
//     without its approval token is EFORBIDDEN; a missing exit summary is
//     EINVALID. Each message names its rule.

import (
	"strings"
	"time"
	"unicode"

	"github.com/kairos-agent/kairos"
)

// Mode is a thread's working mode.
type Mode string

// The modes, in the order a thread goes through them.
const (
	ModeDiscuss  Mode = "DISCUSS"  // talk and read-only exploration
	ModeDiagnose Mode = "DIAGNOSE" // + sandboxed testing
	ModeExecute  Mode = "EXECUTE"  // + writes and external effects (approved)
)

// Modes lists the modes in order.
var Modes = []Mode{ModeDiscuss, ModeDiagnose, ModeExecute}

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool {
	return m == ModeDiscuss || m == ModeDiagnose || m == ModeExecute
}

// ParseMode reads a mode name case-insensitively ("execute" → EXECUTE),
// for the /mode command.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToUpper(strings.TrimSpace(s)))
	if !m.Valid() {
		return "", kairos.Errorf(kairos.EINVALID, "unknown mode %q: use DISCUSS, DIAGNOSE or EXECUTE", s)
	}
	return m, nil
}

// Classification kinds.
const (
	KindCoordination = "coordination" // talk about the work: questions, plans, status, read-only requests
	KindAction       = "action"       // a request that Kairos change or run something
)

// Classification is the result of Classify.
type Classification struct {
	Kind   string // KindCoordination or KindAction
	Reason string // why, for the journal: `imperative "delete"`, "question", …
	Verb   string // the action verb that made it an action, if any
}

// Classify tells coordination talk from action talk (seed 002, R10).
//
// The rule, applied to each sentence (split at . ! ? ; and new lines) after
// dropping leading fillers ("ok", "please", "now", "Kairos,", "@bot" …):
//
//  1. A negated request ("don't …", "do not …", "never …") is coordination.
//  2. A polite request whose verb is an action verb is an action:
//     "can/could/would/will you [please] VERB", "I want/need/'d like you to
//     VERB", "go ahead and VERB", "let's VERB".
//  3. A sentence that starts with an action verb is an action (an
//     imperative): run, execute, send, email, post, publish, deploy,
//     delete, remove, erase, forget, store, save, remember, schedule,
//     remind, book, buy, pay, install, restart, … (see actionVerbs).
//     "go ahead", "proceed", "do it" are actions too (a go-ahead).
//  4. Everything else is coordination: questions (a "?" or a leading
//     question word), planning language (plan, idea, think, discuss, …),
//     read-only requests (search, find, show, explain, summarize, recall, …),
//     and statements ("I'm about to send it" is the user acting, not
//     Kairos).
//
// A message is an action when any of its sentences is. "Action" means a
// change in the world or in Kairos's memory, or running code: read-only
// look-ups are coordination because the explore envelope serves them in
// DISCUSS without any change of mode. When unsure, Classify says
// coordination: the cost of that mistake is a question, the cost of the
// other is an unwanted act.
func Classify(text string) Classification {
	var first *Classification
	seen := false
	for _, s := range sentences(text) {
		c, ok := classifySentence(s.words, s.question)
		if !ok {
			continue
		}
		seen = true
		if c.Kind == KindAction {
			return c
		}
		if first == nil && c.Reason != reasonNoRequest {
			cc := c
			first = &cc
		}
	}
	switch {
	case first != nil:
		return *first
	case seen:
		return Classification{Kind: KindCoordination, Reason: reasonNoRequest}
	case strings.TrimSpace(text) != "":
		return Classification{Kind: KindCoordination, Reason: "greeting or filler"}
	default:
		return Classification{Kind: KindCoordination, Reason: "empty message"}
	}
}

const reasonNoRequest = "no request to act"

// actionVerbs are verbs whose imperative asks Kairos to change or run
// something.
var actionVerbs = setOf(
	"run", "execute", "exec", "rerun", "send", "resend", "email", "mail", "message", "text", "dm",
	"post", "publish", "deploy", "ship", "release", "push", "commit", "merge", "upload",
	"delete", "remove", "erase", "wipe", "purge", "drop", "clear", "forget", "unsubscribe", "cancel",
	"store", "save", "remember", "memorize", "record", "log", "note", "write", "create", "add",
	"update", "edit", "change", "modify", "rename", "set", "apply", "fix", "install", "uninstall", "upgrade",
	"schedule", "reschedule", "remind", "book", "reserve", "invite", "reply", "forward", "share", "notify",
	"buy", "purchase", "order", "pay", "transfer", "sign",
	"start", "stop", "kill", "restart", "launch", "trigger", "generate", "build", "test", "download",
	"archive", "submit", "proceed",
)

// readVerbs are read-only requests: coordination, served by explore.
var readVerbs = setOf(
	"search", "find", "look", "lookup", "show", "list", "tell", "explain", "summarize", "summarise",
	"describe", "compare", "recall", "check", "read", "review", "translate", "define", "calculate", "compute",
	"estimate", "analyze", "analyse", "help",
)

var planningWords = setOf(
	"plan", "plans", "planning", "idea", "ideas", "think", "thinking", "thoughts", "discuss", "consider",
	"approach", "strategy", "options", "option", "proposal", "propose", "brainstorm", "maybe", "perhaps",
	"alternatives", "tradeoffs", "pros", "cons", "talk", "design",
)

var questionWords = setOf(
	"what", "why", "how", "when", "where", "who", "whom", "whose", "which",
	"is", "are", "was", "were", "am", "do", "does", "did", "should", "shall", "could", "would",
	"can", "will", "may", "might", "have", "has", "had", "isn't", "aren't", "doesn't", "didn't",
	"shouldn't", "couldn't", "wouldn't", "won't", "can't",
)

var fillers = setOf(
	"ok", "okay", "k", "please", "pls", "plz", "kindly", "now", "then", "so", "and", "also", "just",
	"hey", "hi", "hello", "kairos", "alright", "right", "great", "good", "thanks", "thank", "yes", "no",
	"yeah", "yep", "sure", "first", "next", "finally", "well", "oh", "cool", "nice", "perfect",
)

var negations = setOf("don't", "dont", "never", "stop", "cannot", "can't", "shouldn't", "mustn't")

type sentence struct {
	words    []string
	question bool
}

// sentences splits text at sentence ends and lowercases its words.
func sentences(text string) []sentence {
	var out []sentence
	var cur strings.Builder
	flush := func(q bool) {
		if ws := words(cur.String()); len(ws) > 0 {
			out = append(out, sentence{ws, q})
		}
		cur.Reset()
	}
	for _, r := range text {
		switch r {
		case '.', '!', ';', '\n':
			flush(false)
		case '?':
			flush(true)
		default:
			cur.WriteRune(r)
		}
	}
	flush(false)
	return out
}

func words(s string) []string {
	s = strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	var out []string
	for _, f := range strings.Fields(s) {
		w := strings.TrimFunc(f, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '@' && r != '/'
		})
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// classifySentence applies Classify's rule to one sentence; ok is false
// for a sentence of fillers only.
func classifySentence(ws []string, question bool) (Classification, bool) {
	for len(ws) > 0 && (fillers[ws[0]] || strings.HasPrefix(ws[0], "@")) {
		ws = ws[1:]
	}
	if len(ws) == 0 {
		return Classification{}, false
	}
	has := func(prefix ...string) bool { return startsWith(ws, prefix...) }

	// 1. Negated requests.
	// "stop the job" is an imperative; "stop sending …" and "stop" alone
	// ask Kairos to do less.
	stopImperative := ws[0] == "stop" && len(ws) > 1 && !strings.HasSuffix(ws[1], "ing")
	if has("do", "not") || negations[ws[0]] && !stopImperative {
		return coord("negated request")
	}

	// 2. Polite and indirect requests: find the verb after the lead-in.
	if rest, lead := leadIn(ws); lead != "" {
		return classifyLead(rest, lead)
	}

	// 3. Imperatives and go-aheads.
	if has("go", "ahead") || has("do", "it") || has("proceed") {
		return act("go-ahead", "proceed")
	}
	if has("remind", "me") {
		return act("imperative \"remind\"", "remind")
	}
	if actionVerbs[ws[0]] && !question {
		return act("imperative \""+ws[0]+"\"", ws[0])
	}

	// 4. Coordination of some kind.
	switch {
	case question || questionWords[ws[0]]:
		return coord("question")
	case readVerbs[ws[0]]:
		return coord("read-only request \"" + ws[0] + "\"")
	}
	for _, w := range ws {
		if planningWords[w] {
			return coord("planning language \"" + w + "\"")
		}
	}
	if actionVerbs[ws[0]] { // an imperative phrased as a question: "delete it?"
		return coord("question")
	}
	return coord(reasonNoRequest)
}

// coord and act are classifySentence's two answers.
func coord(reason string) (Classification, bool) {
	return Classification{Kind: KindCoordination, Reason: reason}, true
}

func act(reason, verb string) (Classification, bool) {
	return Classification{Kind: KindAction, Reason: reason, Verb: verb}, true
}

// startsWith reports whether the words ws begin with prefix.
func startsWith(ws []string, prefix ...string) bool {
	if len(ws) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if ws[i] != p {
			return false
		}
	}
	return true
}

// leadIn finds a polite or indirect request's lead-in ("could you",
// "i'd like you to", "go ahead and", "let's"): the words after it, fillers
// dropped, and its kind; lead is "" when the sentence has none.
func leadIn(ws []string) (rest []string, lead string) {
	has := func(prefix ...string) bool { return startsWith(ws, prefix...) }
	switch {
	case len(ws) >= 2 && (ws[0] == "can" || ws[0] == "could" || ws[0] == "would" || ws[0] == "will") && ws[1] == "you":
		rest, lead = ws[2:], "polite request"
	case has("i", "want", "you", "to"), has("i", "need", "you", "to"):
		rest, lead = ws[4:], "polite request"
	case has("i'd", "like", "you", "to"), has("id", "like", "you", "to"):
		rest, lead = ws[4:], "polite request"
	case has("i", "would", "like", "you", "to"):
		rest, lead = ws[5:], "polite request"
	case has("go", "ahead", "and"):
		rest, lead = ws[3:], "go-ahead"
	case has("let's"), has("lets"):
		rest, lead = ws[1:], "let's"
	case has("let", "us"):
		rest, lead = ws[2:], "let's"
	}
	for len(rest) > 0 && fillers[rest[0]] {
		rest = rest[1:]
	}
	return rest, lead
}

// classifyLead classifies a request by the verb after its lead-in.
func classifyLead(rest []string, lead string) (Classification, bool) {
	switch {
	case len(rest) > 0 && actionVerbs[rest[0]]:
		return act(lead+" \""+rest[0]+"\"", rest[0])
	case len(rest) > 0 && readVerbs[rest[0]]:
		return coord("read-only request \"" + rest[0] + "\"")
	case lead == "let's":
		return coord("planning language")
	}
	return coord("question")
}

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// TransitionInput is what the caller knows about a requested mode change.
type TransitionInput struct {
	Actor         string    // who asks: a user key, "agent", "system"
	At            time.Time // when (the message's time)
	ApprovalToken string    // an approval's id; needed to enter EXECUTE
	Summary       string    // what was done; needed to leave EXECUTE
	Reset         bool      // an explicit reset (/mode reset): any → DISCUSS
	Timeout       bool      // the thread idled past agent.mode_timeout: any → DISCUSS
}

// ModeTransition is an accepted mode change, for the journal.
type ModeTransition struct {
	From, To      Mode
	Actor         string
	At            time.Time
	ApprovalToken string
	Summary       string
	Cause         string // "advance", "approved", "exit", "reset" or "timeout"
}

// Mode rules, named in Transition's errors.
const (
	RuleUnknownMode   = "known-modes"      // both modes must be DISCUSS, DIAGNOSE or EXECUTE
	RuleSameMode      = "same-mode"        // no transition to the current mode (except a reset)
	RuleResetTarget   = "reset-to-discuss" // reset and timeout lead to DISCUSS only
	RuleDiagnoseFirst = "diagnose-first"   // DISCUSS → EXECUTE must go through DIAGNOSE
	RuleNeedsApproval = "execute-approval" // DIAGNOSE → EXECUTE needs an approval token
	RuleExitSummary   = "exit-summary"     // EXECUTE → DISCUSS needs a summary
	RuleExitToDiscuss = "exit-to-discuss"  // EXECUTE → DIAGNOSE is refused: exit to DISCUSS first
	RuleNoBackward    = "no-backward-step" // DIAGNOSE → DISCUSS is refused: use reset
)

func ruleErr(code, rule, format string, args ...any) error {
	return kairos.Errorf(code, "mode rule "+rule+": "+format, args...)
}

// Transition validates a change of mode (seed 002's state machine):
//
//	DISCUSS  → DIAGNOSE   always
//	DIAGNOSE → EXECUTE    with an approval token
//	EXECUTE  → DISCUSS    with a summary
//	any      → DISCUSS    with Reset or Timeout
//
// and refuses DISCUSS → EXECUTE, EXECUTE → DIAGNOSE and DIAGNOSE → DISCUSS
// (without reset). Errors are *kairos.Error (EINVALID or EFORBIDDEN) whose
// message names the rule (the Rule* constants).
func Transition(from, to Mode, t TransitionInput) (ModeTransition, error) {
	mt := ModeTransition{From: from, To: to, Actor: t.Actor, At: t.At, ApprovalToken: t.ApprovalToken, Summary: strings.TrimSpace(t.Summary)}
	if !from.Valid() || !to.Valid() {
		bad := from
		if from.Valid() {
			bad = to
		}
		return ModeTransition{}, ruleErr(kairos.EINVALID, RuleUnknownMode, "unknown mode %q", string(bad))
	}
	if t.Reset || t.Timeout {
		if to != ModeDiscuss {
			return ModeTransition{}, ruleErr(kairos.EINVALID, RuleResetTarget, "a reset or timeout leads to DISCUSS, not %s", to)
		}
		mt.Cause = "reset"
		if !t.Reset {
			mt.Cause = "timeout"
		}
		return mt, nil
	}
	if from == to {
		return ModeTransition{}, ruleErr(kairos.EINVALID, RuleSameMode, "already in %s", to)
	}
	switch {
	case from == ModeDiscuss && to == ModeDiagnose:
		mt.Cause = "advance"
		return mt, nil
	case from == ModeDiagnose && to == ModeExecute:
		if strings.TrimSpace(t.ApprovalToken) == "" {
			return ModeTransition{}, ruleErr(kairos.EFORBIDDEN, RuleNeedsApproval, "entering EXECUTE needs an approval")
		}
		mt.Cause = "approved"
		return mt, nil
	case from == ModeExecute && to == ModeDiscuss:
		if mt.Summary == "" {
			return ModeTransition{}, ruleErr(kairos.EINVALID, RuleExitSummary, "leaving EXECUTE needs a summary of what was done")
		}
		mt.Cause = "exit"
		return mt, nil
	case from == ModeDiscuss && to == ModeExecute:
		return ModeTransition{}, ruleErr(kairos.EINVALID, RuleDiagnoseFirst, "DISCUSS cannot go straight to EXECUTE; move to DIAGNOSE first")
	case from == ModeExecute && to == ModeDiagnose:
		return ModeTransition{}, ruleErr(kairos.EINVALID, RuleExitToDiscuss, "EXECUTE cannot go back to DIAGNOSE; exit to DISCUSS with a summary first")
	default: // DIAGNOSE → DISCUSS
		return ModeTransition{}, ruleErr(kairos.EINVALID, RuleNoBackward, "DIAGNOSE cannot step back to DISCUSS; use a reset")
	}
}

// NextModes lists the modes reachable from m without a reset, with what
// each needs, for the /mode command's help.
func NextModes(m Mode) map[Mode]string {
	switch m {
	case ModeDiscuss:
		return map[Mode]string{ModeDiagnose: "nothing"}
	case ModeDiagnose:
		return map[Mode]string{ModeExecute: "an approval"}
	case ModeExecute:
		return map[Mode]string{ModeDiscuss: "a summary"}
	}
	return nil
}
