// Package schedule is the model-facing `schedule` tool (CONTRACT.md):
// create a reminder, a recurring reminder, a task (a prompt the agent
// runs at its time) or a watching cell; list and cancel them.
//
// Times are parsed by an injected function (clockstate.ParseAnchoredTime
// in production) anchored to the thread's Session TZ, and recurrences by
// injected functions (package schedules): this package imports neither.
// Creating and cancelling are impactful (CLOCK.md §8.2): Action states
// the resolved time so the agent's approval shows it before anything is
// stored. It must not deliver anything; the runner does.
package schedule
