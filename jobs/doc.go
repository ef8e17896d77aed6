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
// It must not import adapters (store, bot, openai, sandbox) or clockstate:
// timezones, clock compaction and backups come in as functions from
// cmd/kairos, the stores as root interfaces. It never sends messages.
package jobs
