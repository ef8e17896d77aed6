package policy_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
)

// webTuning are the policy's keys a web edit may change freely ("*" for
// a map key). Every other key must have a widening the tests try: a key
// added to kairos.Policy fails TestWebEditClassifiesEveryKey until it is
// put in one or the other.
var webTuning = []string{
	"clock.enabled", "clock.mode", "clock.cross_channel_tracking", "clock.store.last_message_timestamps",
	"clock.store.latest_actions.enabled", "clock.store.latest_actions.max_items", "clock.store.latest_actions.auto_clock_temporal_actions",
	"clock.store.latest_actions.require_explicit_clock_it_for_non_temporal", "clock.store.latest_actions.store_quotes",
	"clock.checkins.enabled", "clock.checkins.rules", "clock.inference.enabled", "clock.inference.allow_for_tone_only",
	"clock.ambiguity_threshold_hours",
	"agent.persona", "agent.max_steps", "agent.max_tool_calls", "agent.max_turn_tokens", "agent.history_tokens",
	"agent.max_reply_tokens", "agent.mode_timeout", "agent.retries", "agent.model_timeout",
	"sessions.auto_divide", "sessions.auto_divide_time", "sessions.code_executions_retention", "sessions.approvals_retention",
	"sessions.updates_retention", "sessions.outbox_retention", "sessions.firings_retention", "sessions.token_usage_retention",
	"sessions.backup_schedule",
	"approvals.timeout",
	"media.enabled", "media.vision", "media.max_image_side", "media.max_document_bytes", "media.show_transcript",
	"media.voice_replies", "media.store_images", "media.max_parallel_files",
	"schedules.max_per_user", "schedules.min_interval", "schedules.reminder_min_interval", "schedules.task_min_interval",
	"schedules.cell_min_interval", "schedules.late_threshold", "schedules.travel", "schedules.default_time",
	"mcp.max_tools", "mcp.call_timeout", "mcp.servers.*.call_timeout",
	"models.*.context_window", "models.*.tool_calling", "models.*.vision", "models.*.max_output_tokens", "models.*.thinking",
	"skills.versions_kept", "skills.max_failures", "skills.max_offered", "skills.max_per_user", "skills.max_tests",
	"budgets.per_risk_tier.*.risk_tier", "budgets.spend.notice_at",
	"research.stale_after", "research.resume",
}

// policyKeys lists the leaf keys of a policy type, by their YAML names.
func policyKeys(t reflect.Type, prefix string, out *[]string) {
	join := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	switch {
	case t == reflect.TypeFor[kairos.Duration]():
		*out = append(*out, prefix)
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "" { // inline
				policyKeys(t.Field(i).Type, prefix, out)
				continue
			}
			policyKeys(t.Field(i).Type, join(name), out)
		}
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		policyKeys(t.Elem(), prefix, out)
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		policyKeys(t.Elem(), join("*"), out)
	default:
		*out = append(*out, prefix)
	}
}

// Each key of the policy is either tuning or has widenings that the
// property tests try, never both.
func TestWebEditClassifiesEveryKey(t *testing.T) {
	var keys []string
	policyKeys(reflect.TypeFor[kairos.Policy](), "", &keys)
	guarded := map[string]bool{}
	for _, w := range widenings() {
		guarded[w.pattern] = true
	}
	for _, k := range keys {
		switch free := slices.Contains(webTuning, k); {
		case free && guarded[k]:
			t.Errorf("%s is both tuning and guarded", k)
		case !free && !guarded[k]:
			t.Errorf("%s is neither tuning (webTuning) nor tried by a widening: decide whether the web may change it", k)
		}
	}
	for _, k := range append(slices.Clone(webTuning), slices.Sorted(maps.Keys(guarded))...) {
		if !slices.ContainsFunc(keys, func(key string) bool { return key == k || strings.HasPrefix(key, k+".") }) {
			t.Errorf("%s is not a key of the policy", k)
		}
	}
	if len(keys) < 100 {
		t.Fatalf("only %d keys found", len(keys))
	}
}

// Any value of a tuning key is accepted, on random policies.
func TestWebEditTuningKeysAreFree(t *testing.T) {
	for seed := range uint64(webSeeds / 2) {
		r := rand.New(rand.NewPCG(seed, 3))
		for _, key := range webTuning {
			old, proposed := genPolicy(seed), genPolicy(seed)
			atKey(r, reflect.ValueOf(old).Elem(), reflect.ValueOf(proposed).Elem(), strings.Split(key, "."), func(v reflect.Value) { randomize(r, v) })
			if err := policy.WebEditRefusal(old, proposed); err != nil {
				t.Fatalf("seed %d: a change of %s refused: %v", seed, key, err)
			}
		}
	}
}

// atKey finds a key in both policies (making a map entry, the same in
// both, when there is none) and calls f with the proposed one's value.
func atKey(r *rand.Rand, o, n reflect.Value, path []string, f func(v reflect.Value)) {
	if len(path) == 0 {
		f(n)
		return
	}
	switch n.Kind() {
	case reflect.Struct:
		atKey(r, fieldByYAML(o, path[0]), fieldByYAML(n, path[0]), path[1:], f)
	case reflect.Map:
		if n.IsNil() {
			n.Set(reflect.MakeMap(n.Type()))
			o.Set(reflect.MakeMap(o.Type()))
		}
		key := reflect.ValueOf("added")
		if ks := n.MapKeys(); len(ks) > 0 {
			key = ks[r.IntN(len(ks))]
		}
		ov, nv := reflect.New(o.Type().Elem()).Elem(), reflect.New(n.Type().Elem()).Elem()
		if v := o.MapIndex(key); v.IsValid() {
			ov.Set(v)
		}
		if v := n.MapIndex(key); v.IsValid() {
			nv.Set(v)
		}
		atKey(r, ov, nv, path[1:], f)
		o.SetMapIndex(key, ov)
		n.SetMapIndex(key, nv)
	default:
		panic(fmt.Sprintf("cannot walk %s at %v", n.Kind(), path))
	}
}

// randomize gives a value of a policy key a random value of its type.
func randomize(r *rand.Rand, v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[kairos.Duration]():
		v.Set(reflect.ValueOf(kairos.Duration{Minutes: float64(r.IntN(10000))}))
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
	case v.CanInt():
		v.SetInt(r.Int64N(1 << 20))
	case v.CanFloat():
		v.SetFloat(r.Float64() * 100)
	case v.Kind() == reflect.String:
		v.SetString(fmt.Sprintf("t%d", r.IntN(100)))
	case v.Kind() == reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.New(v.Type().Elem()).Elem()))
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		randomize(r, p.Elem())
		v.Set(p)
	default:
		panic("no random value for " + v.Type().String())
	}
}
