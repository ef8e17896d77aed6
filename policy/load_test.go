package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

// TestParseErrors has one case per error class, with the exact
// file:line:col lines expected.
func TestParseErrors(t *testing.T) { checkParseErrors(t, parseErrorCases) }

// parseErrorCase is a policy source and the exact errors Parse reports.
type parseErrorCase struct {
	name string
	src  string
	want []string
}

var parseErrorCases = []parseErrorCase{
	{"unknown top-level key with suggestion", "# policy\naccess:\n  pairing: true\nclokc:\n  mode: light\n",
		[]string{`policy.yaml:4:1: unknown key "clokc", did you mean "clock"?`}},
	{"unknown key at line 3 col 1", "access:\n  pairing: true\nclokc: {}\n",
		[]string{`policy.yaml:3:1: unknown key "clokc", did you mean "clock"?`}},
	{"unknown key without suggestion", "zzz: 1\n",
		[]string{`policy.yaml:1:1: unknown key "zzz"`}},
	{"unknown nested key", "clock:\n  mdoe: light\n",
		[]string{`policy.yaml:2:3: unknown key "mdoe" in clock, did you mean "mode"?`}},
	{"unknown key in list item", "clock:\n  checkins:\n    rules:\n      - id: x\n        wen: {}\n        then: {offer_recap: true}\n",
		[]string{`policy.yaml:5:9: unknown key "wen" in clock.checkins.rules[0], did you mean "when"?`}},
	{"bool expected", "clock:\n  enabled: yes\n",
		[]string{`policy.yaml:2:12: clock.enabled: expected true or false, got a string "yes" (YAML 1.2: write true or false)`}},
	{"integer expected", "agent:\n  max_steps: many\n",
		[]string{`policy.yaml:2:14: agent.max_steps: expected an integer, got a string "many"`}},
	{"integer expected, float given", "clock:\n  store:\n    latest_actions:\n      max_items: 2.5\n",
		[]string{`policy.yaml:4:18: clock.store.latest_actions.max_items: expected an integer, got a number 2.5`}},
	{"string expected", "agent:\n  model: 4\n",
		[]string{`policy.yaml:2:10: agent.model: expected a string, got an integer 4 (quote it)`}},
	{"mapping expected", "clock: true\n",
		[]string{`policy.yaml:1:8: clock: expected a mapping, got a boolean true`}},
	{"list expected", "access:\n  operators: 12\n",
		[]string{`policy.yaml:2:14: access.operators: expected a list, got an integer 12`}},
	{"top level not a mapping", "- a\n- b\n",
		[]string{`policy.yaml:1:1: the policy file: expected a mapping, got a list`}},
	{"clock mode enum", "clock:\n  mode: normall\n",
		[]string{`policy.yaml:2:9: clock.mode: "normall" is not one of off, light, normal, did you mean "normal"?`}},
	{"auto_divide enum", "sessions:\n  auto_divide: hourly\n",
		[]string{`policy.yaml:2:16: sessions.auto_divide: "hourly" is not one of daily, weekly, none`}},
	{"auto_divide_time", "sessions:\n  auto_divide_time: \"25:00\"\n",
		[]string{`policy.yaml:2:21: sessions.auto_divide_time: "25:00" is not a time of day HH:MM (00:00 to 23:59)`}},
	{"schedules default_time", "schedules:\n  default_time: 9am\n",
		[]string{`policy.yaml:2:17: schedules.default_time: "9am" is not a time of day HH:MM (00:00 to 23:59); empty asks for the time`}},
	{"ui_automation has no surface", "features:\n  ui_automation: true\n",
		[]string{`policy.yaml:2:18: features.ui_automation: Kairos has no UI automation; this flag can only be false`}},
	{"peer_sync has no surface", "features:\n  network: true\n  peer_sync: true\n",
		[]string{`policy.yaml:3:14: features.peer_sync: Kairos has no peer sync; this flag can only be false`}},
	{"group_replies enum", "access:\n  group_replies: everyone\n",
		[]string{`policy.yaml:2:18: access.group_replies: "everyone" is not one of mention, all`}},
	{"verb key", "budgets:\n  per_verb:\n    BUILT:\n      time_budget_ms: 10\n",
		[]string{`policy.yaml:3:5: budgets.per_verb.BUILT: "BUILT" is not a task verb (IDENTIFY, MONITOR, PROCURE, MAINTAIN, RESEARCH, BUILD, UPDATE), did you mean "BUILD"?`}},
	{"risk tier key", "budgets:\n  per_risk_tier:\n    extreme: {}\n",
		[]string{`policy.yaml:3:5: budgets.per_risk_tier.extreme: "extreme" is not a risk tier (low, medium, high)`}},
	{"risk tier value", "budgets:\n  defaults:\n    risk_tier: hihg\n",
		[]string{`policy.yaml:3:16: budgets.defaults.risk_tier: "hihg" is not one of low, medium, high, did you mean "high"?`}},
	{"negative budget", "budgets:\n  per_verb:\n    BUILD: {max_network_calls: -1}\n",
		[]string{`policy.yaml:3:32: budgets.per_verb.BUILD.max_network_calls: must not be negative, got -1`}},
	{"defaults floor", "budgets:\n  defaults:\n    time_budget_ms: 0\n",
		[]string{`policy.yaml:3:21: budgets.defaults.time_budget_ms: the defaults need a time budget above 0`}},
	{"http method", "network:\n  methods: [GET, FETCH]\n",
		[]string{`policy.yaml:2:18: network.methods[1]: "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`}},
	{"http method case", "network:\n  methods: [post]\n",
		[]string{`policy.yaml:2:13: network.methods[0]: "post": HTTP methods are upper-case, write "POST"`}},
	{"allow list URL", "network:\n  allow_list:\n    - https://example.org/x\n",
		[]string{`policy.yaml:3:7: network.allow_list[0]: "https://example.org/x": write a host name (example.org) or *.suffix, not a URL`}},
	{"duration", "agent:\n  mode_timeout: 30m\n",
		[]string{`policy.yaml:2:17: agent.mode_timeout: "30m" is not an ISO-8601 duration (e.g. P1D, PT2H, PT30M, P1W)`}},
	{"zero duration", "approvals:\n  timeout: PT0S\n",
		[]string{`policy.yaml:2:12: approvals.timeout: must be longer than zero`}},
	{"thread kind", "clock:\n  checkins:\n    rules:\n      - id: a\n        when: {thread_kind: chat}\n        then: {offer_recap: true}\n",
		[]string{`policy.yaml:5:29: clock.checkins.rules[0].when.thread_kind: "chat" is not one of project, conversation, scheduling, operations`}},
	{"duplicate rule id", "clock:\n  checkins:\n    rules:\n      - id: a\n        then: {offer_recap: true}\n      - id: a\n        then: {ask_for_updates: true}\n",
		[]string{`policy.yaml:6:13: clock.checkins.rules[1].id: duplicate rule id "a" (also rules[0])`}},
	{"rule without id", "clock:\n  checkins:\n    rules:\n      - then: {offer_recap: true}\n",
		[]string{`policy.yaml:4:9: clock.checkins.rules[0]: a rule needs an id`}},
	{"rule without outcome", "clock:\n  checkins:\n    rules:\n      - id: a\n        when: {elapsed_gte: P1D}\n",
		[]string{`policy.yaml:4:9: clock.checkins.rules[0].then: the rule does nothing: set ask_for_updates, allow_hedged_reference or offer_recap to true`}},
	{"max_items", "clock:\n  store:\n    latest_actions: {max_items: 0}\n",
		[]string{`policy.yaml:3:33: clock.store.latest_actions.max_items: must be at least 1, got 0`}},
	{"operator id", "access:\n  operators: [12, -5]\n",
		[]string{`policy.yaml:2:19: access.operators[1]: a Telegram user id is a positive number, got -5`}},
	{"approval action", "approvals:\n  required: [memory.forgot]\n",
		[]string{`policy.yaml:2:14: approvals.required[0]: "memory.forgot" is not a known action (search, memory.store, memory.recall, memory.list, memory.forget, code.execute, code.generate, code.status, code.network_write, code.secrets, schedule.create, schedule.list, schedule.cancel, mcp.read, mcp.write, skill.list, skill.test, skill.create, skill.update, skill.rollback, skill.run, research), did you mean "memory.forget"?`}},
	{"never grant", "approvals:\n  never_grant: [skill.creat, notes__add_note, network.unlisted_host, \"a b\"]\n",
		[]string{`policy.yaml:2:17: approvals.never_grant[0]: "skill.creat" is not an action (search, memory.store, memory.recall, memory.list, memory.forget, code.execute, code.generate, code.status, code.network_write, code.secrets, schedule.create, schedule.list, schedule.cancel, mcp.read, mcp.write, skill.list, skill.test, skill.create, skill.update, skill.rollback, skill.run, research), network.unlisted_host, or a tool named server__tool or skill__name, did you mean "skill.create"?`,
			`policy.yaml:2:70: approvals.never_grant[3]: "a b" is not an action (search, memory.store, memory.recall, memory.list, memory.forget, code.execute, code.generate, code.status, code.network_write, code.secrets, schedule.create, schedule.list, schedule.cancel, mcp.read, mcp.write, skill.list, skill.test, skill.create, skill.update, skill.rollback, skill.run, research), network.unlisted_host, or a tool named server__tool or skill__name`}},
	{"cron", "sessions:\n  backup_schedule: every day\n",
		[]string{`policy.yaml:2:20: sessions.backup_schedule: "every day" is not a cron schedule (5 fields or @daily): expected exactly 5 fields, found 2: [every day]`}},
	{"syntax error", "clock:\n  mode: [light\n",
		[]string{`policy.yaml:2:9: YAML syntax: sequence end token ']' not found`}},
	{"duplicate key", "clock:\n  mode: light\n  mode: normal\n",
		[]string{`policy.yaml:3:3: YAML syntax: mapping key "mode" already defined at [2:3]`}},
	{"two documents", "clock: {}\n---\naccess: {}\n",
		[]string{`policy.yaml:2:1: a policy file holds one YAML document`}},
	{"unknown alias", "clock:\n  mode: *nope\n",
		[]string{`policy.yaml:2:9: clock.mode: unknown alias *nope`}},
	{"every error, in file order", "clokc: 1\nclock:\n  enabled: 3\n  mode: x\nagent:\n  retries: 11\n",
		[]string{
			`policy.yaml:1:1: unknown key "clokc", did you mean "clock"?`,
			`policy.yaml:3:12: clock.enabled: expected true or false, got an integer 3`,
			`policy.yaml:4:9: clock.mode: "x" is not one of off, light, normal`,
			`policy.yaml:6:12: agent.retries: must be at most 10, got 11`,
		}},
}

// checkParseErrors parses each case's source and wants exactly its
// errors, as one EINVALID error whose message holds the first.
func checkParseErrors(t *testing.T, tests []parseErrorCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := policy.Parse("policy.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", p)
			}
			var errs policy.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not policy.Errors: %v", err, err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if kairos.ErrorCode(err) != kairos.EINVALID {
				t.Errorf("ErrorCode = %q, want EINVALID", kairos.ErrorCode(err))
			}
			if !strings.Contains(kairos.ErrorMessage(err), tc.want[0]) {
				t.Errorf("ErrorMessage = %q, want it to hold %q", kairos.ErrorMessage(err), tc.want[0])
			}
		})
	}
}

func TestParseDecodesOverDefaults(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		modify func(p *kairos.Policy) // applied to the defaults to get the expected policy
	}{
		{"empty file", "", func(*kairos.Policy) {}},
		{"comments only", "# nothing here\n", func(*kairos.Policy) {}},
		{"null section keeps defaults", "clock:\nagent: ~\n", func(*kairos.Policy) {}},
		{"null key keeps default", "clock:\n  mode:\n", func(*kairos.Policy) {}},
		{"one key changes, siblings stay", "clock:\n  mode: off\n  store:\n    latest_actions: {max_items: 5}\n", func(p *kairos.Policy) {
			p.Clock.Mode = "off"
			p.Clock.Store.LatestActions.MaxItems = 5
		}},
		{"a given list replaces the default list", "approvals:\n  required: [memory.forget]\n", func(p *kairos.Policy) {
			p.Approvals.Required = []string{"memory.forget"}
		}},
		{"an empty list empties", "approvals:\n  required: []\n", func(p *kairos.Policy) {
			p.Approvals.Required = []string{}
		}},
		{"never_grant may be emptied", "approvals:\n  never_grant: []\n", func(p *kairos.Policy) {
			p.Approvals.NeverGrant = []string{}
		}},
		{"rules replace, fields of new rules start empty", "clock:\n  checkins:\n    rules:\n      - id: only\n        when: {has_open_action: false, elapsed_any_channel_gte: P7D}\n        then: {offer_recap: true}\n",
			func(p *kairos.Policy) {
				no, week := false, kairos.MustDuration("P7D")
				p.Clock.Checkins.Rules = []kairos.CheckinRule{{ID: "only", When: kairos.CheckinWhen{HasOpenAction: &no, ElapsedAnyChannelGTE: &week}, Then: kairos.CheckinThen{OfferRecap: true}}}
			}},
		{"builtin blocked categories cannot be removed", "network:\n  blocked_categories: [gambling]\n", func(p *kairos.Policy) {
			p.Network.BlockedCategories = append(append([]string(nil), kairos.BuiltinBlockedCategories...), "gambling")
		}},
		{"builtin blocked categories: empty list", "network:\n  blocked_categories: []\n", func(*kairos.Policy) {}},
		{"maps, verbs and tiers", "budgets:\n  per_verb:\n    BUILD: {time_budget_ms: 60000, risk_tier: medium}\n  per_risk_tier:\n    high: {max_network_calls: 0, time_budget_ms: 1000}\n", func(p *kairos.Policy) {
			p.Budgets.PerVerb = map[string]kairos.CellBudget{"BUILD": {TimeBudgetMS: 60000, RiskTier: "medium"}}
			p.Budgets.PerRiskTier = map[string]kairos.CellBudget{"high": {TimeBudgetMS: 1000}}
		}},
		{"anchors, aliases and merge keys", "budgets:\n  per_verb:\n    BUILD: &b {time_budget_ms: 5000, max_tool_calls: 3}\n    UPDATE:\n      <<: *b\n      max_tool_calls: 9\n", func(p *kairos.Policy) {
			p.Budgets.PerVerb = map[string]kairos.CellBudget{
				"BUILD":  {TimeBudgetMS: 5000, MaxToolCalls: 3},
				"UPDATE": {TimeBudgetMS: 5000, MaxToolCalls: 9},
			}
		}},
		{"ids, floats and strings", "access:\n  operators: [123456789]\n  allowed_users: [5, 6]\n  group_replies: all\nclock:\n  ambiguity_threshold_hours: 2.5\nagent:\n  persona: |\n    Terse.\n  fallback_models: [a, \"b\"]\nsessions:\n  auto_divide_time: 03:30\n  backup_schedule: \"0 3 * * *\"\n", func(p *kairos.Policy) {
			p.Access.Operators = []int64{123456789}
			p.Access.AllowedUsers = []int64{5, 6}
			p.Access.GroupReplies = "all"
			p.Clock.AmbiguityThresholdHours = 2.5
			p.Agent.Persona = "Terse.\n"
			p.Agent.FallbackModels = []string{"a", "b"}
			p.Sessions.AutoDivideTime = "03:30"
			p.Sessions.BackupSchedule = "0 3 * * *"
		}},
		{"explicit !!str tag", "agent:\n  model: !!str 4\n", func(p *kairos.Policy) { p.Agent.Model = "4" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policy.Parse("policy.yaml", []byte(tc.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := kairos.DefaultPolicy()
			tc.modify(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file means defaults", func(t *testing.T) {
		path := filepath.Join(dir, "none.yaml")
		res, err := policy.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Defaults || res.Path != path {
			t.Errorf("Defaults=%v Path=%q, want true %q", res.Defaults, res.Path, path)
		}
		if diff := cmp.Diff(kairos.DefaultPolicy(), res.Policy); diff != "" {
			t.Errorf("policy differs from defaults:\n%s", diff)
		}
		p, err := policy.Load(path)
		if err != nil || p == nil {
			t.Fatalf("Load = %v, %v", p, err)
		}
	})
	t.Run("file positions use the path given", func(t *testing.T) {
		path := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(path, []byte("clock:\n  mode: loud\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := policy.Load(path)
		want := path + `:2:9: clock.mode: "loud" is not one of off, light, normal`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
	t.Run("a directory is an error", func(t *testing.T) {
		if _, err := policy.Load(dir); err == nil {
			t.Error("Load(dir) succeeded")
		}
	})
	t.Run("too large", func(t *testing.T) {
		path := filepath.Join(dir, "big.yaml")
		big := "# " + strings.Repeat("x", policy.MaxFileSize) + "\n"
		if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := policy.Load(path); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("valid file", func(t *testing.T) {
		path := filepath.Join(dir, "ok.yaml")
		if err := os.WriteFile(path, []byte("clock:\n  mode: normal\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := policy.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if res.Defaults || res.Policy.Clock.Mode != "normal" {
			t.Errorf("got Defaults=%v mode=%q", res.Defaults, res.Policy.Clock.Mode)
		}
	})
}

func TestValidate(t *testing.T) {
	if err := policy.Validate(kairos.DefaultPolicy()); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if err := policy.Validate(nil); err == nil {
		t.Error("Validate(nil) = nil")
	}
	p := kairos.DefaultPolicy()
	p.Clock.Mode = "loud"
	p.Sessions.AutoDivide = "hourly"
	err := policy.Validate(p)
	want := "clock.mode: \"loud\" is not one of off, light, normal\nsessions.auto_divide: \"hourly\" is not one of daily, weekly, none"
	if err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want\n%s", err, want)
	}
	if kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("code = %q", kairos.ErrorCode(err))
	}
}

func TestStatic(t *testing.T) {
	if diff := cmp.Diff(kairos.DefaultPolicy(), policy.Static(nil).Current()); diff != "" {
		t.Errorf("Static(nil) is not the defaults:\n%s", diff)
	}
	p := kairos.DefaultPolicy()
	p.Network.BlockedCategories = nil
	got := policy.Static(p).Current()
	if len(p.Network.BlockedCategories) != 0 {
		t.Error("Static modified its argument")
	}
	if diff := cmp.Diff(kairos.BuiltinBlockedCategories, got.Network.BlockedCategories, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("builtins not merged:\n%s", diff)
	}
}
