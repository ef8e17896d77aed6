package clockstate

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// LinkCodeTTL is how long a /clock link code stays valid.
const LinkCodeTTL = 10 * time.Minute

// ClockUsage lists the /clock sub-commands.
const ClockUsage = "Usage: /clock — show; /clock tz <IANA zone>|clear; /clock home <IANA zone>|clear; " +
	"/clock kind project|conversation|scheduling|operations; /clock mode off|light|normal|default; " +
	"/clock done [label]; /clock cancel [label]; /clock link [code]; /clock unlink; " +
	"/clock calibrate <activity> <typical minutes> [max minutes]"

// ClockCommand runs the /clock command for the sender of in:
//
//	/clock                      Session TZ, kind, mode and open actions
//	/clock tz <IANA>|clear      the thread's Session TZ override (in a DM
//	                            it also becomes the user's default when
//	                            none is set)
//	/clock home <IANA>|clear    the user's default TZ
//	/clock kind <kind>          project, conversation, scheduling, operations
//	/clock mode <mode>          off, light, normal (default: the policy's)
//	/clock done|cancel [label]  close the newest matching open action
//	/clock link [code]          link two identities across channels (§7.0)
//	/clock unlink
//	/clock calibrate <activity> <typical> [max]
//
// A bad argument is an EINVALID error whose message is safe to show.
func (w *Wrapper) ClockCommand(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
	if in == nil {
		return "", kairos.Errorf(kairos.EINVALID, "no message")
	}
	at := in.Date
	if at.IsZero() {
		at = w.now()
	}
	uk, tk := in.UserKey(), in.ThreadKey()
	fields := strings.Fields(args)
	sub := ""
	if len(fields) > 0 {
		sub = strings.ToLower(fields[0])
	}
	arg := ""
	if len(fields) > 1 {
		arg = strings.Join(fields[1:], " ")
	}
	switch sub {
	case "", "show", "status":
		return w.showClock(ctx, in, at)
	case "tz", "timezone":
		return w.setTZ(ctx, in, arg, false)
	case "home":
		return w.setTZ(ctx, in, arg, true)
	case "kind":
		k := strings.ToLower(arg)
		if !validKind(k) {
			return "", kairos.Errorf(kairos.EINVALID, "Unknown thread kind %q. Use one of: %s.", arg, strings.Join(kairos.ThreadKinds, ", "))
		}
		if err := w.SaveClockState(ctx, uk, tk, kairos.ClockPatch{ThreadKind: &k}); err != nil {
			return "", err
		}
		return "Thread kind set to " + k + ".", nil
	case "mode":
		m := strings.ToLower(arg)
		switch {
		case m == "default" || m == "reset" || m == "clear":
			m = ""
		case !validMode(m):
			return "", kairos.Errorf(kairos.EINVALID, "Unknown clock mode %q. Use off, light or normal (or default).", arg)
		}
		if err := w.SaveClockState(ctx, uk, tk, kairos.ClockPatch{Mode: &m}); err != nil {
			return "", err
		}
		if m == "" {
			return "Clock mode reset to the policy default (" + EffectiveMode(w.Policy(), nil) + ").", nil
		}
		return "Clock mode set to " + m + ".", nil
	case "done", "cancel":
		st, err := w.LoadClockState(ctx, uk, tk)
		if err != nil {
			return "", err
		}
		t := &turn{pol: w.Policy(), st: st, at: at, userKey: uk, threadKey: tk}
		kind := DirDone
		if sub == "cancel" {
			kind = DirCancel
		}
		return w.closeAction(ctx, t, Directive{Kind: kind, Arg: arg}, visibleActions(st.Actions, tk, at))
	case "link":
		return w.linkCommand(ctx, uk, arg, w.now())
	case "unlink":
		if err := w.Unlink(ctx, uk); err != nil {
			return "", err
		}
		return "This identity is no longer linked to other channels.", nil
	case "calibrate":
		return w.calibrateCommand(ctx, uk, fields[1:], at)
	}
	return "", kairos.Errorf(kairos.EINVALID, "%s", ClockUsage)
}

func (w *Wrapper) setTZ(ctx context.Context, in *kairos.Inbound, arg string, home bool) (string, error) {
	uk, tk := in.UserKey(), in.ThreadKey()
	if arg == "" {
		return "", kairos.Errorf(kairos.EINVALID, "Give an IANA timezone such as Asia/Tokyo, or clear.")
	}
	tz := arg
	switch strings.ToLower(arg) {
	case "clear", "reset", "none", "default":
		tz = ""
	default:
		if _, err := LoadTZ(tz); err != nil {
			return "", err
		}
	}
	var p kairos.ClockPatch
	var reply string
	if home {
		p.DefaultTZ = &tz
		reply = "Your home timezone is now " + tz + "."
		if tz == "" {
			reply = "Your home timezone is cleared."
		}
	} else {
		p.SessionTZ = &tz
		reply = "Session timezone for this thread set to " + tz + "."
		if tz == "" {
			reply = "Session timezone override for this thread cleared."
		}
		if tz != "" && in.ChatKind == kairos.ChatDM {
			st, err := w.LoadClockState(ctx, uk, tk)
			if err != nil {
				return "", err
			}
			if st.User.DefaultTZ == "" {
				p.DefaultTZ = &tz
			}
		}
	}
	if err := w.SaveClockState(ctx, uk, tk, p); err != nil {
		return "", err
	}
	return reply, nil
}

func (w *Wrapper) showClock(ctx context.Context, in *kairos.Inbound, at time.Time) (string, error) {
	uk, tk := in.UserKey(), in.ThreadKey()
	st, err := w.LoadClockState(ctx, uk, tk)
	if err != nil {
		return "", err
	}
	pol := w.Policy()
	res := ResolveSessionTZ("", st.Thread.SessionTZ, st.User.DefaultTZ, nil, at)
	src := map[string]string{TZFromThread: "thread setting", TZFromUser: "your home timezone", TZFromFallback: "default; set one with /clock tz <IANA>"}[res.Source]
	var b strings.Builder
	fmt.Fprintf(&b, "Session TZ: %s (%s), now %s\n", res.TZ, src, ToISO(at, res.TZ))
	if st.User.DefaultTZ != "" && st.User.DefaultTZ != res.TZ {
		fmt.Fprintf(&b, "Home TZ: %s\n", st.User.DefaultTZ)
	}
	fmt.Fprintf(&b, "Kind: %s\n", kindOf(&st.Thread))
	mode := EffectiveMode(pol, &st.User)
	if validMode(st.User.Mode) {
		fmt.Fprintf(&b, "Mode: %s\n", mode)
	} else {
		fmt.Fprintf(&b, "Mode: %s (policy default)\n", mode)
	}
	if !pol.Clock.Enabled {
		b.WriteString("Temporal awareness is disabled in the policy.\n")
	}
	open := visibleActions(st.Actions, tk, at)
	if len(open) == 0 {
		b.WriteString("Open actions: none")
	} else {
		b.WriteString("Open actions:")
		for _, a := range open {
			fmt.Fprintf(&b, "\n- %s (%s, since %s, expires %s)", a.Label, EffectiveStatus(a, at),
				ToISO(a.RecordedAt, res.TZ), ToISO(a.ExpiresAt, res.TZ))
		}
	}
	if len(st.Linked) > 0 {
		keys := make([]string, len(st.Linked))
		for i, u := range st.Linked {
			keys[i] = u.UserKey
		}
		fmt.Fprintf(&b, "\nLinked identities: %s", strings.Join(keys, ", "))
	}
	return b.String(), nil
}

func (w *Wrapper) linkCommand(ctx context.Context, uk, code string, at time.Time) (string, error) {
	if code == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c := fmt.Sprintf("%06d", binary.BigEndian.Uint64(b[:])%1000000)
		// Stored, so a restart (or another replica) does not lose it.
		if err := w.store.PutLinkCode(ctx, c, uk, at, at.Add(LinkCodeTTL)); err != nil {
			return "", fmt.Errorf("clock: store link code: %w", err)
		}
		return "To link this identity with your identity on another channel, send /clock link " + c +
			" there within " + strconv.Itoa(int(LinkCodeTTL/time.Minute)) + " minutes. Linked identities share last-seen times and clocked actions.", nil
	}
	other, err := w.store.LinkCodeUser(ctx, code, at)
	if kairos.ErrorCode(err) == kairos.ENOTFOUND {
		return "", kairos.Errorf(kairos.EINVALID, "Unknown or expired link code.")
	}
	if err != nil {
		return "", fmt.Errorf("clock: read link code: %w", err)
	}
	if other == uk {
		return "", kairos.Errorf(kairos.EINVALID, "Send the code from your identity on the other channel.")
	}
	// A code is used once, whether the link then works or not.
	if err := w.store.DeleteLinkCode(ctx, code); err != nil {
		return "", fmt.Errorf("clock: use link code: %w", err)
	}
	if err := w.Link(ctx, other, uk); err != nil {
		return "", err
	}
	return "Linked " + other + " with " + uk + ".", nil
}

func (w *Wrapper) calibrateCommand(ctx context.Context, uk string, args []string, at time.Time) (string, error) {
	if len(args) < 2 || len(args) > 3 {
		return "", kairos.Errorf(kairos.EINVALID, "Usage: /clock calibrate <activity> <typical minutes> [max minutes], e.g. /clock calibrate meal:dinner 90 240")
	}
	typical, err1 := strconv.Atoi(args[1])
	max := typical * 2
	var err2 error
	if len(args) == 3 {
		max, err2 = strconv.Atoi(args[2])
	}
	if err1 != nil || err2 != nil || typical < 1 || typical > 24*60 || max < typical || max > 7*24*60 {
		return "", kairos.Errorf(kairos.EINVALID, "Minutes must be whole numbers with 1 ≤ typical ≤ 1440 and typical ≤ max.")
	}
	activity := strings.ToLower(args[0])
	if len(activity) > 64 {
		return "", kairos.Errorf(kairos.EINVALID, "Activity names are at most 64 characters.")
	}
	if err := w.store.SetClockCalibration(ctx, uk, activity, kairos.ActivityCalibration{TypicalMinutes: typical, MaxMinutes: max, UpdatedAt: at}); err != nil {
		return "", fmt.Errorf("calibrate: %w", err)
	}
	return fmt.Sprintf("Calibrated %s: typically %d min, at most %d min.", activity, typical, max), nil
}
