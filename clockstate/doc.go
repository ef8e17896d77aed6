// Package clockstate implements CLOCK.md (seed 001, v1.2): the timezone
// provider of §4.4 (Provider, ParseAnchoredTime, ResolveLocal,
// ResolveSessionTZ), the interaction wrapper of §4.5 (Wrapper, which
// implements kairos.ClockWrapper), policy-gated temporal awareness and
// check-ins (§5, §9), latest actions with directives, expiry and
// calibration (§6), groups and identity linking (§7), and the version-3
// clock-state export and import (§10).
//
// Every turn's instant is the message's own date (received_at), never the
// host clock when the message has one. Time is injected (Config.Now) and
// state lives behind kairos.ClockStore, so the package performs no I/O of
// its own except the export and import files.
//
// It must not import store, bot, agent or any adapter; it must not map a
// timezone abbreviation silently, turn a floating time into an instant
// without a Session TZ anchor, present an expired action as open, or add
// anything to the prompt beyond the turn's time and elapsed time when no
// rule or time reference makes the clock relevant.
package clockstate
