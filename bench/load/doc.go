// Command load drives a running `kairos run` (a subprocess) through an
// in-process fake Telegram Bot API and an instant fake OpenAI-compatible
// model with N chats × M messages, and prints throughput, end-to-end
// latency percentiles, lost, doubled and out-of-order replies, idle and
// peak RSS of the kairos process, and the time from its start to its first
// getUpdates.
//
// With -mix it runs a mixed soak instead (mix.go): -chats users at a
// human pace send plain text, code cells, searches (against a fake
// SearXNG it serves), memory stores and recalls, reminders a minute
// ahead (approved by pressing the button) and voice notes (getFile, the
// download, /audio/transcriptions) for -duration, and it prints each
// kind's push → reply latency; -slow and -trace explain the slow turns.
//
// It is a benchmark harness, not part of the product: it imports nothing
// from the module (the fakes here are small and specific to the load: no
// entity parsing, no recording beyond what the figures need), and it never
// talks to the real Telegram or model APIs.
//
//	go run -tags sqlite_fts5 ./bench/load -chats 50 -messages 20
//	go run -tags sqlite_fts5 ./bench/load -chats 1000 -messages 5 -limits=false
//	go run -tags sqlite_fts5 ./bench/load -mix -duration 15m -slow /tmp/slow.txt
//
// With -peer picoclaw -peer-bin PATH it drives PicoClaw instead (peer.go):
// it writes PicoClaw's config.json (the fake Bot API as telego's API
// server, the fake model as an OpenAI-compatible api_base, the load's
// chats in allow_from) into a temporary PICOCLAW_HOME, runs `picoclaw
// onboard` (the workspace templates) and then `picoclaw gateway`, with the
// same pushes, reply detection and figures. -closed makes every chat wait
// for the reply to its previous message before it sends the next
// (closed.go). bench/peer/compare.sh alternates kairos and PicoClaw runs
// and prints the ratios; doc/benchmarks.md, "Against PicoClaw (issue 36)".
package main
