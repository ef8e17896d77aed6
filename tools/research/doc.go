// Package research is seed 004's tiered research: the `research` tool and
// the engine behind /research.
//
// A question goes through tiers, lowest first: the user's memories and
// summaries, the operator's offline references (a folder indexed with the
// store's full-text search, and ZIM archives through kiwix-serve), the
// allow-listed web, an external model given a redacted context, and books
// (suggestions only). A tier is tried only while the Verifier says parts
// of the question are uncovered.
//
// Three roles share one model. The Planner (trusted) splits the question
// into parts and writes queries; it sees the question and checked quotes,
// never a page. The Researcher (tainted) reads the sources and answers
// with claims, each citing an evidence ref and a quote; it can ask for a
// search or a fetch and nothing else. The Verifier (trusted) says which
// parts the checked claims cover. Every source read is kept in the
// evidence ledger, and code, not a model, checks each claim: the cited
// source must be in the ledger, the quote must appear in its text, and
// the numbers and dates of the claim must appear in the quote. A claim
// that fails is dropped. Confidence is computed from the evidence (how
// many independent sources agree, their tiers and ages).
//
// The package must not perform side effects beyond reading: it writes
// only its own traces and ledger, never memories, schedules or anything
// outside, and it fetches only URLs a search returned or the user wrote,
// on domains the policy allows.
package research
