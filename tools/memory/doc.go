// Package memory is the model-facing `memory` tool (seed 003, Tool 3):
// store, recall, list and forget a user's memories in two stores —
// user_memory (categorical life context: facts, goals, open loops, …) and
// summaries (calendar-aligned conversation roll-ups keyed by period). It
// also holds the period-key helpers (PeriodKey, PeriodRange,
// CheckPeriodKey) that the sessions roll-up job shares.
//
// Memories belong to one user: every call is scoped to the invocation's
// UserKey, so in a group one user's memories are never recalled for
// another. Persistence is a kairos.MemoryStore (package store implements
// it); embeddings come from an optional kairos.Embedder.
//
// It must not import store or any other adapter, must not decide policy
// (forget is reported as impactful; approving it is the agent's job), and
// must not start sessions itself: the "__NEW_SESSION__" call is handed to
// Config.OnNewSession.
package memory
