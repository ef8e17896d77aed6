package clockstate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/clockstate"
)

// populated returns a harness with a little of everything.
func populated(t *testing.T) *harness {
	h := newHarness(t, nil)
	in := dm(1, "clock: kind project", t0)
	h.setTZ(in, "Asia/Tokyo")
	if _, err := h.cmd(in, "mode normal"); err != nil {
		t.Fatal(err)
	}
	h.send(in)
	h.reply(in, "Thread kind set to project.", t0.Add(5*time.Second))
	h.send(dm(1, "clock it: I'm going to eat dinner", t0.Add(8*time.Hour+10*time.Minute)))
	if _, err := h.cmd(in, "calibrate meal:dinner 90 240"); err != nil {
		t.Fatal(err)
	}
	h.send(grp(-5, 1, "hi all", t0.Add(time.Hour)))
	h.send(grp(-5, 2, "hello", t0.Add(time.Hour+time.Minute)))
	return h
}

func exportJSON(t *testing.T, h *harness) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := h.w.Export(h.ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// §10.2: the version-3 shape.
func TestSection10_2_ExportShape(t *testing.T) {
	h := populated(t)
	var doc map[string]any
	if err := json.Unmarshal(exportJSON(t, h), &doc); err != nil {
		t.Fatal(err)
	}
	get := func(path ...string) any {
		var v any = doc
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %q", path, p)
			}
			v = m[p]
		}
		return v
	}
	if get("version") != float64(3) {
		t.Errorf("version %v", get("version"))
	}
	const u, th = "telegram:1", "agent:main:telegram:dm:1"
	for path, want := range map[string]any{
		"users/telegram:1/default_tz":                                                 "Asia/Tokyo",
		"users/telegram:1/policy_overrides/mode":                                      "normal",
		"users/telegram:1/last_interaction_any_channel_iso":                           "2026-02-09T18:10:00+09:00",
		"users/telegram:1/channels/" + th + "/last_user_message_iso":                  "2026-02-09T18:10:00+09:00",
		"users/telegram:1/channels/" + th + "/last_agent_message_iso":                 "2026-02-09T10:00:05+09:00",
		"users/telegram:1/calibration/activity_overrides/meal:dinner/typical_minutes": float64(90),
		"users/telegram:1/calibration/activity_overrides/meal:dinner/max_minutes":     float64(240),
		"threads/" + th + "/thread_kind":                                              "project",
		"threads/" + th + "/session_tz":                                               "Asia/Tokyo",
		"threads/" + th + "/agent_tz":                                                 "Europe/Berlin",
		"threads/" + th + "/delta_hours":                                              float64(8),
		"threads/" + th + "/last_interaction_iso":                                     "2026-02-09T18:10:00+09:00",
		"threads/" + th + "/last_user_message_iso_by_user/telegram:1":                 "2026-02-09T18:10:00+09:00",
		"threads/agent:main:telegram:group:-5/thread_kind":                            "conversation",
	} {
		if got := get(strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	parts := get("threads", "agent:main:telegram:group:-5", "participants").([]any)
	if len(parts) != 2 || parts[0] != "telegram:1" || parts[1] != "telegram:2" {
		t.Errorf("participants %v", parts)
	}
	acts := get("users", u, "latest_actions").([]any)
	if len(acts) != 1 {
		t.Fatalf("latest_actions %v", acts)
	}
	a := acts[0].(map[string]any)
	for k, want := range map[string]any{
		"id": "act_0001", "label": "Eat dinner", "type": "temporal_action", "status": "planned",
		"recorded_iso": "2026-02-09T18:10:00+09:00", "expected_typical_minutes": float64(75), "expected_max_minutes": float64(180),
		"expires_iso": "2026-02-10T18:10:00+09:00", "thread_key": th, "source": "clock_it",
	} {
		if a[k] != want {
			t.Errorf("latest_actions[0].%s = %v, want %v", k, a[k], want)
		}
	}
	if _, ok := a["quote"]; ok {
		t.Error("quote exported with store_quotes false")
	}
}

// §10.2: export → import → export is the identity.
func TestSection10_2_ExportImportRoundTrip(t *testing.T) {
	src := populated(t)
	first := exportJSON(t, src)
	dst := newHarness(t, nil)
	if err := clockstate.Import(dst.ctx, dst.cs, bytes.NewReader(first)); err != nil {
		t.Fatal(err)
	}
	second := exportJSON(t, dst)
	if !bytes.Equal(first, second) {
		t.Errorf("round trip differs:\n%s\n---\n%s", first, second)
	}
	// The imported state drives the wrapper: the project gap fires.
	env := dst.send(dm(1, "hello again", t0.Add(3*24*time.Hour)))
	if env.SessionTZ != "Asia/Tokyo" || strings.Join(env.CheckinActions, ",") != "ask_for_updates" {
		t.Errorf("after import: %s %v", env.SessionTZ, env.CheckinActions)
	}
}

// The §10.2 example document (placeholders filled in) imports.
func TestSection10_2_ImportSpecExample(t *testing.T) {
	const example = `{
  "version": 3,
  "users": {
    "<user_id>": {
      "default_tz": "Asia/Tokyo",
      "policy_overrides": {"mode": "light"},
      "last_interaction_any_channel_iso": "2026-02-09T10:00:00+09:00",
      "channels": {"<channel_key>": {"last_user_message_iso": "2026-02-09T10:00:00+09:00", "last_agent_message_iso": "2026-02-09T10:00:05+09:00"}},
      "latest_actions": [{"id": "act_9f3c", "label": "Eat dinner", "type": "temporal_action", "status": "planned",
        "recorded_iso": "2026-02-09T18:10:00+09:00", "expected_typical_minutes": 75, "expected_max_minutes": 180,
        "expires_iso": "2026-02-10T18:10:00+09:00", "thread_key": "agent:main:chat:dm:<user_id>", "source": "auto"}],
      "calibration": {"activity_overrides": {"meal:dinner": {"typical_minutes": 90, "max_minutes": 240, "updated_iso": "2026-02-01T12:00:00+09:00"}}}
    }
  },
  "threads": {
    "<thread_key>": {"thread_kind": "project", "session_tz": "Asia/Tokyo", "agent_tz": "Europe/Berlin", "delta_hours": 8,
      "participants": ["<user_id>", "<user_id_2>"], "last_interaction_iso": "2026-02-09T10:00:05+09:00",
      "last_user_message_iso_by_user": {"<user_id>": "2026-02-09T10:00:00+09:00"}}
  }
}`
	h := newHarness(t, nil)
	if err := clockstate.Import(h.ctx, h.cs, strings.NewReader(example)); err != nil {
		t.Fatal(err)
	}
	st := h.state("<user_id>", "<thread_key>")
	if st.User.DefaultTZ != "Asia/Tokyo" || st.Thread.Kind != "project" || len(st.Actions) != 1 ||
		!st.Thread.LastInteraction.Equal(time.Date(2026, 2, 9, 1, 0, 5, 0, time.UTC)) ||
		st.User.Calibration["meal:dinner"].TypicalMinutes != 90 {
		t.Errorf("imported state %+v", st)
	}
}

func TestSection10_2_ImportValidation(t *testing.T) {
	h := newHarness(t, nil)
	for name, doc := range map[string]string{
		"not json":      `{"version":`,
		"version 2":     `{"version": 2, "users": {}, "threads": {}}`,
		"bad timestamp": `{"version": 3, "users": {"u": {"last_interaction_any_channel_iso": "yesterday"}}}`,
		"bad tz":        `{"version": 3, "users": {"u": {"default_tz": "EST"}}}`,
		"bad mode":      `{"version": 3, "users": {"u": {"policy_overrides": {"mode": "loud"}}}}`,
		"bad status":    `{"version": 3, "users": {"u": {"latest_actions": [{"id": "a", "label": "x", "status": "maybe", "recorded_iso": "2026-02-09T10:00:00Z", "expires_iso": "2026-02-10T10:00:00Z"}]}}}`,
		"no expiry":     `{"version": 3, "users": {"u": {"latest_actions": [{"id": "a", "label": "x", "status": "planned", "recorded_iso": "2026-02-09T10:00:00Z"}]}}}`,
		"bad kind":      `{"version": 3, "threads": {"t": {"thread_kind": "party"}}}`,
	} {
		err := clockstate.Import(h.ctx, h.cs, strings.NewReader(doc))
		if kairos.ErrorCode(err) != kairos.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
	if kairos.ErrorMessage(clockstate.Import(h.ctx, h.cs, strings.NewReader(`{"version": 3, "users": {"u": {"last_interaction_any_channel_iso": "yesterday"}}}`))) == "" {
		t.Error("no message")
	}
}

// §10.3: the export is written atomically under a lock: temp file in the
// same folder, fsync, rename, fsync of the folder; concurrent exports
// leave one whole file and no temporaries.
func TestSection10_3_ExportFileAtomic(t *testing.T) {
	h := populated(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "clock-state.json")
	if err := os.WriteFile(path, []byte("old content"), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- clockstate.ExportFile(h.ctx, h.cs, path)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f clockstate.StateFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 3 || len(f.Users) != 2 {
		t.Fatalf("exported file: %v %+v", err, f.Version)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "clock-state.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// ImportFile reads it back into another store.
	dst := newHarness(t, nil)
	if err := clockstate.ImportFile(dst.ctx, dst.cs, path); err != nil {
		t.Fatal(err)
	}
	if st := dst.state("telegram:1", "agent:main:telegram:dm:1"); st.Thread.Kind != "project" {
		t.Errorf("ImportFile: %+v", st.Thread)
	}
	// An export that cannot be written reports it.
	if err := clockstate.ExportFile(h.ctx, h.cs, filepath.Join(dir, "missing", "x.json")); err == nil {
		t.Error("export into a missing folder succeeded")
	}
}
