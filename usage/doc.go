// Package usage is Kairos's cost accounting and spending caps.
//
// A Guard prices every model call from the policy's models section (no
// price: tokens only), records it through the session store with whom
// and what it was for, and checks the caps of budgets.spend before each
// call: a user at a cap gets one sentence and no model request is made.
// Model, Embedder and Speaker wrap the model's doors so that every caller
// (turns, scheduled tasks, summaries, the coding call, embeddings, spoken
// answers) goes through the same check; transcription calls Guard.Begin
// itself (only the file says what it will cost). The SpendContext in the
// call's context says whom it is for.
//
// Totals are kept in memory per user and refreshed from the database
// every Config.Refresh, so the check costs no query on most turns; a
// user's model calls run one at a time while the user has a cap, and
// every call holds its expected use against the caps until it is
// recorded, so concurrent turns overshoot a cap (the bot's included) by
// about the one call in flight. Days and months are windows anchored once
// spent in (window.go): a zone change takes effect at the next window.
//
// It must not know Telegram or the store's tables: notices leave through
// Config.Notify, totals come through kairos.UsageStore.
package usage
