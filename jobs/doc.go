// Package jobs is Kairos's scheduler and the jobs it runs: automatic
// session division in each user's own Session TZ (plus the lazy rollover
// the agent calls before a turn), the single implementation of ending a
// session (/newsession, the memory tool's __NEW_SESSION__, the rollover),
// calendar roll-ups of conversation summaries into daily, weekly, monthly,
// quarterly and yearly summaries, and maintenance (clock-action
// compaction, code_executions pruning, scheduled backups). Every run is
// journaled through kairos.JobStore; a job never overlaps itself and a
// panic in a job is recovered, logged and journaled.
//
// One ticker drives everything: each job has a robfig/cron schedule
// ("@every 1m" for the division, a cron spec for backups), and the
// scheduler wakes at the earliest next time. Per-user timezones are not
// cron locations: the division job runs every minute and asks, for each
// open session, whether the most recent division boundary in that thread's
// Session TZ lies after the session's first message. Time is injected
// (Config.Now) and RunDue runs a tick deterministically, so tests never
// sleep.
//
// Decisions where the spec is silent:
//
//   - A session is divided when a boundary lies after its first message
//     (not merely after its start): an empty session just goes on, so idle
//     threads collect no empty sessions and the previous summary stays one
//     hop away. The old session ends at the boundary instant itself.
//   - A conversation summary is filed under the local day of the session's
//     first message under daily division (a night owl's 04:00 division
//     keeps the night with its evening), of its last message otherwise.
//   - A period is rolled up once it has ended and, unless auto_divide is
//     none, no open session of the user holds messages from before its
//     end. Months roll up from dailies (ISO weeks straddle months),
//     quarters from months, years from quarters. The look-back is the
//     previous month (quarter, year): longer outages lose older roll-ups.
//   - When no model answers, a session still ends, with a marked excerpt
//     of its transcript as summary; a roll-up instead fails, is journaled
//     as error and is retried on the next run (higher levels wait).
//   - A user's roll-ups use the Session TZ of their DM thread, else of
//     their first thread; group conversations count for the session's
//     opener.
//
// It must not import adapters (store, bot, openai, sandbox) or clockstate:
// timezones, clock compaction and backups come in as functions from
// cmd/kairos, the stores as root interfaces. It never sends messages.
package jobs
