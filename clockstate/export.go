package clockstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
)

// StateVersion is the CLOCK-STATE schema version (§10.2).
const StateVersion = 3

// exportLayout is ISO-8601 with offset, fractional seconds only when set.
const exportLayout = "2006-01-02T15:04:05.999-07:00"

// StateFile is the §10.2 CLOCK-STATE.json document (version 3). Kairos
// keys users by channel-scoped user key ("telegram:42"), channels by thread
// key, and adds a few fields (marked "extension") that the schema leaves
// open; readers that ignore unknown fields read it as plain §10.2.
type StateFile struct {
	Version int                     `json:"version"`
	Users   map[string]*UserState   `json:"users"`
	Threads map[string]*ThreadState `json:"threads"`
}

// UserState is users.<user_id>.
type UserState struct {
	DefaultTZ                    string                   `json:"default_tz,omitempty"`
	PolicyOverrides              PolicyOverrides          `json:"policy_overrides"`
	LastInteractionAnyChannelISO string                   `json:"last_interaction_any_channel_iso,omitempty"`
	Channels                     map[string]*ChannelState `json:"channels"`
	LatestActions                []*ActionState           `json:"latest_actions"`
	Calibration                  CalibrationState         `json:"calibration"`
	LinkGroup                    string                   `json:"link_group,omitempty"` // extension (§7.0)
}

// PolicyOverrides is users.<u>.policy_overrides.
type PolicyOverrides struct {
	Mode string `json:"mode,omitempty"`
}

// ChannelState is users.<u>.channels.<channel_key> (keyed by thread key).
type ChannelState struct {
	LastUserMessageISO  string `json:"last_user_message_iso,omitempty"`
	LastAgentMessageISO string `json:"last_agent_message_iso,omitempty"`
}

// ActionState is one entry of users.<u>.latest_actions.
type ActionState struct {
	ID                     string `json:"id"`
	Label                  string `json:"label"`
	Type                   string `json:"type"`
	Status                 string `json:"status"`
	RecordedISO            string `json:"recorded_iso"`
	ExpectedTypicalMinutes int    `json:"expected_typical_minutes,omitempty"`
	ExpectedMaxMinutes     int    `json:"expected_max_minutes,omitempty"`
	ExpiresISO             string `json:"expires_iso"`
	ThreadKey              string `json:"thread_key,omitempty"`
	Source                 string `json:"source"`
	Activity               string `json:"activity,omitempty"`    // extension
	Quote                  string `json:"quote,omitempty"`       // extension (store_quotes)
	UpdatedISO             string `json:"updated_iso,omitempty"` // extension
}

// CalibrationState is users.<u>.calibration.
type CalibrationState struct {
	ActivityOverrides map[string]*ActivityOverride `json:"activity_overrides"`
}

// ActivityOverride is one calibration entry.
type ActivityOverride struct {
	TypicalMinutes int    `json:"typical_minutes"`
	MaxMinutes     int    `json:"max_minutes"`
	UpdatedISO     string `json:"updated_iso,omitempty"`
}

// ThreadState is threads.<thread_key>. session_tz is the thread's stored
// override (absent when none); delta_hours compares the effective Session
// TZ with agent_tz at export time.
type ThreadState struct {
	ThreadKind               string            `json:"thread_kind"`
	SessionTZ                string            `json:"session_tz,omitempty"`
	AgentTZ                  string            `json:"agent_tz"`
	DeltaHours               float64           `json:"delta_hours"`
	Participants             []string          `json:"participants"`
	LastInteractionISO       string            `json:"last_interaction_iso,omitempty"`
	LastUserMessageISOByUser map[string]string `json:"last_user_message_iso_by_user"`
	LastUserMessageISO       string            `json:"last_user_message_iso,omitempty"`  // extension (§4.5)
	LastAgentMessageISO      string            `json:"last_agent_message_iso,omitempty"` // extension (§4.5)
}

func iso(t time.Time, tz string) string {
	if t.IsZero() {
		return ""
	}
	loc, err := LoadTZ(tz)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format(exportLayout)
}

// StateFromSnapshot renders a snapshot as the §10.2 document. agentTZ and
// now fill agent_tz and delta_hours.
func StateFromSnapshot(s *kairos.ClockSnapshot, agentTZ string, now time.Time) *StateFile {
	f := &StateFile{Version: StateVersion, Users: map[string]*UserState{}, Threads: map[string]*ThreadState{}}
	userTZ := map[string]string{}
	for _, u := range s.Users {
		tz := u.DefaultTZ
		if !ValidTZ(tz) {
			tz = "UTC"
		}
		userTZ[u.UserKey] = tz
		us := &UserState{
			DefaultTZ:                    u.DefaultTZ,
			PolicyOverrides:              PolicyOverrides{Mode: u.Mode},
			LastInteractionAnyChannelISO: iso(u.LastInteractionAnyChannel, tz),
			Channels:                     map[string]*ChannelState{},
			LatestActions:                []*ActionState{},
			Calibration:                  CalibrationState{ActivityOverrides: map[string]*ActivityOverride{}},
			LinkGroup:                    u.LinkGroup,
		}
		for k, c := range u.Channels {
			us.Channels[k] = &ChannelState{LastUserMessageISO: iso(c.LastUserMessage, tz), LastAgentMessageISO: iso(c.LastAgentMessage, tz)}
		}
		for k, c := range u.Calibration {
			us.Calibration.ActivityOverrides[k] = &ActivityOverride{TypicalMinutes: c.TypicalMinutes, MaxMinutes: c.MaxMinutes, UpdatedISO: iso(c.UpdatedAt, tz)}
		}
		f.Users[u.UserKey] = us
	}
	for _, a := range s.Actions {
		us, ok := f.Users[a.UserKey]
		if !ok {
			us = &UserState{Channels: map[string]*ChannelState{}, LatestActions: []*ActionState{},
				Calibration: CalibrationState{ActivityOverrides: map[string]*ActivityOverride{}}}
			f.Users[a.UserKey] = us
			userTZ[a.UserKey] = "UTC"
		}
		tz := userTZ[a.UserKey]
		us.LatestActions = append(us.LatestActions, &ActionState{
			ID: a.ID, Label: a.Label, Type: a.Type, Status: a.Status, RecordedISO: iso(a.RecordedAt, tz),
			ExpectedTypicalMinutes: a.ExpectedTypicalMinutes, ExpectedMaxMinutes: a.ExpectedMaxMinutes,
			ExpiresISO: iso(a.ExpiresAt, tz), ThreadKey: a.ThreadKey, Source: a.Source, Activity: a.Activity,
			Quote: a.Quote, UpdatedISO: iso(a.UpdatedAt, tz),
		})
	}
	for _, t := range s.Threads {
		eff := ResolveSessionTZ("", t.SessionTZ, userDefault(s, DMUserKey(t.ThreadKey)), nil, now).TZ
		ts := &ThreadState{
			ThreadKind:               kindOf(&t),
			SessionTZ:                t.SessionTZ,
			AgentTZ:                  agentTZ,
			Participants:             []string{},
			LastInteractionISO:       iso(t.LastInteraction, eff),
			LastUserMessageISOByUser: map[string]string{},
			LastUserMessageISO:       iso(t.LastUserMessage, eff),
			LastAgentMessageISO:      iso(t.LastAgentMessage, eff),
		}
		if d, err := DeltaMinutes(eff, agentTZ, now); err == nil {
			ts.DeltaHours = float64(d) / 60
		}
		for k, at := range t.LastUserMessageByUser {
			ts.Participants = append(ts.Participants, k)
			ts.LastUserMessageISOByUser[k] = iso(at, eff)
		}
		sort.Strings(ts.Participants)
		f.Threads[t.ThreadKey] = ts
	}
	return f
}

func userDefault(s *kairos.ClockSnapshot, userKey string) string {
	for _, u := range s.Users {
		if u.UserKey == userKey {
			return u.DefaultTZ
		}
	}
	return ""
}

// parseISO reads an exported timestamp; "" is the zero time.
func parseISO(s, field string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, kairos.Errorf(kairos.EINVALID, "%s: %q is not an ISO-8601 timestamp with offset", field, s)
	}
	return t.UTC(), nil
}

var validStatuses = map[string]bool{kairos.ActionPlanned: true, kairos.ActionInProgress: true, kairos.ActionLikelyDone: true,
	kairos.ActionDone: true, kairos.ActionCanceled: true, kairos.ActionExpired: true}

var validSources = map[string]bool{kairos.ActionSourceAuto: true, kairos.ActionSourceClockIt: true, kairos.ActionSourceUserConfirmed: true}

// SnapshotFromState validates a §10.2 document and converts it for the
// store. Errors are EINVALID and name the offending field.
func SnapshotFromState(f *StateFile) (*kairos.ClockSnapshot, error) {
	if f.Version != StateVersion {
		return nil, kairos.Errorf(kairos.EINVALID, "clock state version %d is not supported (want %d)", f.Version, StateVersion)
	}
	s := &kairos.ClockSnapshot{}
	for _, uk := range slices.Sorted(maps.Keys(f.Users)) {
		us := f.Users[uk]
		if uk == "" || us == nil {
			return nil, kairos.Errorf(kairos.EINVALID, "users: empty user entry")
		}
		u, err := userFromState(uk, us)
		if err != nil {
			return nil, err
		}
		s.Users = append(s.Users, u)
		for i, a := range us.LatestActions {
			if a == nil {
				continue
			}
			ca, err := actionFromState(uk, fmt.Sprintf("users.%s.latest_actions[%d]", uk, i), a)
			if err != nil {
				return nil, err
			}
			s.Actions = append(s.Actions, ca)
		}
	}
	for _, tk := range slices.Sorted(maps.Keys(f.Threads)) {
		ts := f.Threads[tk]
		if tk == "" || ts == nil {
			return nil, kairos.Errorf(kairos.EINVALID, "threads: empty thread entry")
		}
		t, err := threadFromState(tk, ts)
		if err != nil {
			return nil, err
		}
		s.Threads = append(s.Threads, t)
	}
	return s, nil
}

// userFromState checks and converts one user's entry (without its
// actions); errors name the entry's path in the file.
func userFromState(uk string, us *UserState) (kairos.UserClock, error) {
	p := "users." + uk
	var err error
	if us.DefaultTZ != "" && !ValidTZ(us.DefaultTZ) {
		return kairos.UserClock{}, kairos.Errorf(kairos.EINVALID, "%s.default_tz: unknown timezone %q", p, us.DefaultTZ)
	}
	if m := us.PolicyOverrides.Mode; m != "" && !validMode(m) {
		return kairos.UserClock{}, kairos.Errorf(kairos.EINVALID, "%s.policy_overrides.mode: %q is not off, light or normal", p, m)
	}
	u := kairos.UserClock{UserKey: uk, DefaultTZ: us.DefaultTZ, Mode: us.PolicyOverrides.Mode, LinkGroup: us.LinkGroup}
	if u.LastInteractionAnyChannel, err = parseISO(us.LastInteractionAnyChannelISO, p+".last_interaction_any_channel_iso"); err != nil {
		return u, err
	}
	for ck, c := range us.Channels {
		if c == nil {
			continue
		}
		var cc kairos.ChannelClock
		if cc.LastUserMessage, err = parseISO(c.LastUserMessageISO, p+".channels."+ck+".last_user_message_iso"); err != nil {
			return u, err
		}
		if cc.LastAgentMessage, err = parseISO(c.LastAgentMessageISO, p+".channels."+ck+".last_agent_message_iso"); err != nil {
			return u, err
		}
		if u.Channels == nil {
			u.Channels = map[string]kairos.ChannelClock{}
		}
		u.Channels[ck] = cc
	}
	for act, c := range us.Calibration.ActivityOverrides {
		if c == nil {
			continue
		}
		if c.TypicalMinutes < 0 || c.MaxMinutes < 0 {
			return u, kairos.Errorf(kairos.EINVALID, "%s.calibration.activity_overrides.%s: negative minutes", p, act)
		}
		upd, err := parseISO(c.UpdatedISO, p+".calibration.activity_overrides."+act+".updated_iso")
		if err != nil {
			return u, err
		}
		if u.Calibration == nil {
			u.Calibration = map[string]kairos.ActivityCalibration{}
		}
		u.Calibration[act] = kairos.ActivityCalibration{TypicalMinutes: c.TypicalMinutes, MaxMinutes: c.MaxMinutes, UpdatedAt: upd}
	}
	return u, nil
}

// actionFromState checks and converts one clocked action at path ap.
func actionFromState(uk, ap string, a *ActionState) (*kairos.ClockAction, error) {
	if a.ID == "" || a.Label == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "%s: id and label are required", ap)
	}
	if !validStatuses[a.Status] {
		return nil, kairos.Errorf(kairos.EINVALID, "%s.status: %q is not a known status", ap, a.Status)
	}
	src := a.Source
	if src == "" {
		src = kairos.ActionSourceAuto
	}
	if !validSources[src] {
		return nil, kairos.Errorf(kairos.EINVALID, "%s.source: %q is not auto, clock_it or user_confirmed", ap, a.Source)
	}
	ca := &kairos.ClockAction{ID: a.ID, UserKey: uk, ThreadKey: a.ThreadKey, Label: a.Label, Type: a.Type, Status: a.Status,
		Source: src, Activity: a.Activity, Quote: a.Quote,
		ExpectedTypicalMinutes: a.ExpectedTypicalMinutes, ExpectedMaxMinutes: a.ExpectedMaxMinutes}
	if ca.Type == "" {
		ca.Type = "temporal_action"
	}
	var err error
	if ca.RecordedAt, err = parseISO(a.RecordedISO, ap+".recorded_iso"); err != nil {
		return nil, err
	}
	if ca.ExpiresAt, err = parseISO(a.ExpiresISO, ap+".expires_iso"); err != nil {
		return nil, err
	}
	if ca.RecordedAt.IsZero() || ca.ExpiresAt.IsZero() {
		return nil, kairos.Errorf(kairos.EINVALID, "%s: recorded_iso and expires_iso are required (all actions expire)", ap)
	}
	if ca.UpdatedAt, err = parseISO(a.UpdatedISO, ap+".updated_iso"); err != nil {
		return nil, err
	}
	if ca.UpdatedAt.IsZero() {
		ca.UpdatedAt = ca.RecordedAt
	}
	return ca, nil
}

// threadFromState checks and converts one thread's entry.
func threadFromState(tk string, ts *ThreadState) (kairos.ThreadClock, error) {
	p := "threads." + tk
	if ts.ThreadKind != "" && !validKind(ts.ThreadKind) {
		return kairos.ThreadClock{}, kairos.Errorf(kairos.EINVALID, "%s.thread_kind: %q is not one of %v", p, ts.ThreadKind, kairos.ThreadKinds)
	}
	if ts.SessionTZ != "" && !ValidTZ(ts.SessionTZ) {
		return kairos.ThreadClock{}, kairos.Errorf(kairos.EINVALID, "%s.session_tz: unknown timezone %q", p, ts.SessionTZ)
	}
	t := kairos.ThreadClock{ThreadKey: tk, Kind: ts.ThreadKind, SessionTZ: ts.SessionTZ}
	var err error
	if t.LastInteraction, err = parseISO(ts.LastInteractionISO, p+".last_interaction_iso"); err != nil {
		return t, err
	}
	if t.LastUserMessage, err = parseISO(ts.LastUserMessageISO, p+".last_user_message_iso"); err != nil {
		return t, err
	}
	if t.LastAgentMessage, err = parseISO(ts.LastAgentMessageISO, p+".last_agent_message_iso"); err != nil {
		return t, err
	}
	for uk, v := range ts.LastUserMessageISOByUser {
		at, err := parseISO(v, p+".last_user_message_iso_by_user."+uk)
		if err != nil {
			return t, err
		}
		if t.LastUserMessageByUser == nil {
			t.LastUserMessageByUser = map[string]time.Time{}
		}
		t.LastUserMessageByUser[uk] = at
	}
	return t, nil
}

// Export writes the whole clock state to out as the §10.2 JSON document.
func Export(ctx context.Context, store kairos.ClockStore, out io.Writer) error {
	return exportTo(ctx, store, out, DetectAgentTZ(), time.Now())
}

// Export writes the state with the wrapper's agent timezone and clock.
func (w *Wrapper) Export(ctx context.Context, out io.Writer) error {
	return exportTo(ctx, w.store, out, w.agentTZ, w.now())
}

func exportTo(ctx context.Context, store kairos.ClockStore, out io.Writer, agentTZ string, now time.Time) error {
	snap, err := store.ExportClock(ctx)
	if err != nil {
		return fmt.Errorf("export clock state: %w", err)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(StateFromSnapshot(snap, agentTZ, now)); err != nil {
		return fmt.Errorf("export clock state: %w", err)
	}
	return nil
}

// publish moves the finished temporary file to path: a rename, or, when
// an existing file must not be replaced, a hard link (which fails when
// path exists) and the removal of the temporary name.
func publish(tmp, path string, replace bool) error {
	if replace {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("export clock state: rename: %w", err)
		}
		return nil
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return kairos.Errorf(kairos.ECONFLICT, "%s already exists (--force replaces it)", path)
		}
		return fmt.Errorf("export clock state: %w", err)
	}
	return os.Remove(tmp)
}

var pathLocks sync.Map // absolute path -> *sync.Mutex

// lockPath serialises exports and imports of one path: an in-process
// mutex, plus an advisory lock on the path's folder against other
// processes (a lock on the folder leaves no path.lock file behind). When
// the folder cannot be locked and required is false, the in-process lock
// alone is held.
func lockPath(path string, required bool) (unlock func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	v, _ := pathLocks.LoadOrStore(abs, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	release, err := lockFile(filepath.Dir(abs))
	if err != nil {
		if required {
			mu.Unlock()
			return nil, err
		}
		release = func() {}
	}
	return func() { release(); mu.Unlock() }, nil
}

// ExportFile writes the state to path atomically (§10.3): under a lock
// (in-process and an advisory lock on path.lock), into a temporary file in
// the same folder that is fsynced, renamed over path, and followed by an
// fsync of the folder. Readers see the old or the new file, never a mix.
func ExportFile(ctx context.Context, store kairos.ClockStore, path string) error {
	return exportFile(ctx, store, path, DetectAgentTZ(), time.Now(), true)
}

// ExportNewFile is ExportFile that never replaces an existing file: it
// returns ECONFLICT when path exists (checked atomically, by a hard link
// of the finished temporary file).
func ExportNewFile(ctx context.Context, store kairos.ClockStore, path string) error {
	return exportFile(ctx, store, path, DetectAgentTZ(), time.Now(), false)
}

func exportFile(ctx context.Context, store kairos.ClockStore, path, agentTZ string, now time.Time, replace bool) (err error) {
	unlock, err := lockPath(path, true)
	if err != nil {
		return fmt.Errorf("export clock state: lock: %w", err)
	}
	defer unlock()
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("export clock state: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("export clock state: %w", err)
	}
	if err = exportTo(ctx, store, tmp, agentTZ, now); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("export clock state: fsync: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("export clock state: %w", err)
	}
	if err = publish(tmp.Name(), path, replace); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("export clock state: fsync folder: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// maxStateFile bounds an imported document.
const maxStateFile = 64 << 20

// Import reads a §10.2 document from r and upserts it into store in one
// transaction. EINVALID for a malformed document.
func Import(ctx context.Context, store kairos.ClockStore, r io.Reader) error {
	var f StateFile
	dec := json.NewDecoder(io.LimitReader(r, maxStateFile))
	if err := dec.Decode(&f); err != nil {
		return kairos.Errorf(kairos.EINVALID, "clock state is not valid JSON: %v", err)
	}
	snap, err := SnapshotFromState(&f)
	if err != nil {
		return err
	}
	if err := store.ImportClock(ctx, snap); err != nil {
		return fmt.Errorf("import clock state: %w", err)
	}
	return nil
}

// ImportFile imports the document at path under the same lock as
// ExportFile.
func ImportFile(ctx context.Context, store kairos.ClockStore, path string) error {
	unlock, err := lockPath(path, false)
	if err != nil {
		return fmt.Errorf("import clock state: lock: %w", err)
	}
	defer unlock()
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("import clock state: %w", err)
	}
	defer f.Close()
	return Import(ctx, store, f)
}
