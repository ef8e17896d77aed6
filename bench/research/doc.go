// Package research is the benchmark of seed 004's tiered research
// (tools/research), run by `go test` in CI with a scripted model
// (internal/testkit.ResearchScript) and by hand with a real one.
//
// The fixture world is generated deterministically: synthetic memories
// with dates and zones, about 200 offline documents (Markdown, HTML, text
// and PDF), a small ZIM archive built with zimwriterfs and served by
// kiwix-serve (its questions are skipped when the Debian packages
// kiwix-tools and zim-tools are absent), and a fake search backend and web
// serving allow-listed, off-list, stale, conflicting and prompt-injection
// pages. 100 questions have known answers and are tagged with the lowest
// tier that answers them; 30 more cross tiers, have no answer, or pit a
// stale source against a fresh one.
//
// TestResearchBenchmark prints accuracy, the share stopping at the lowest
// sufficient tier, citation precision and recall, correct abstentions,
// the Brier score, side effects and off-allow-list fetches under
// injection, budget overruns and p95 time, for the engine and two
// ablations (web first; one pass without the Verifier). doc/benchmarks.md
// holds the figures. It holds no production code.
package research
