// Package schedules runs reminders, tasks and watching cells at their
// time (issue 14): recurrence expansion in the schedule's wall-clock time
// (RFC 5545 RRULEs through teambition/rrule-go, plain English forms
// translated to RRULEs) and the Runner that claims due schedules and
// delivers their firings.
//
// Delivery is an outbox: a claim advances the schedule's next run and
// records the firing in one transaction (a conditional update on the
// schedule's version, so one replica wins each occurrence); the firing is
// then leased, delivered through the caller's Deliver func (which sends
// idempotently through the reply outbox) and finished. A crash after the
// claim leaves a pending firing that the next tick delivers; nothing is
// claimed twice. Firings of different chats are delivered side by side
// (Config.Workers tasks and watching cells at once, and as many
// reminders apart from them), one chat's in due order; a held firing's
// lease is renewed from its lease until it is finished, even while it
// waits behind its chat's earlier firing.
//
// This package must not import adapters (store, bot, openai, sandbox):
// the store and the delivery are injected.
package schedules
