// Package usage is Kairos's cost accounting and spending caps.
//
// A Guard prices every model call from the policy's models section (no
// price: tokens only), records it through the session store with whom
// and what it was for, and checks the caps of budgets.spend before each
// call: a user at a cap gets one sentence and no model request is made.
// Model wraps a kairos.Model so that every caller (turns, scheduled
// tasks, summaries, the coding call) goes through the same check; the
// SpendContext in the call's context says whom it is for.
//
// Totals are kept in memory per user and refreshed from the database
// every Config.Refresh, so the check costs no query on most turns; a
// user's model calls run one at a time while the user has a cap, so
// concurrent turns overshoot a cap by at most the one call in flight.
//
// It must not know Telegram or the store's tables: notices leave through
// Config.Notify, totals come through kairos.UsageStore.
package usage
