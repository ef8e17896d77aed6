// Command load drives a running `kairos run` (a subprocess) through an
// in-process fake Telegram Bot API and an instant fake OpenAI-compatible
// model with N chats × M messages, and prints throughput, end-to-end
// latency percentiles, lost, doubled and out-of-order replies, idle and
// peak RSS of the kairos process, and the time from its start to its first
// getUpdates.
//
// It is a benchmark harness, not part of the product: it imports nothing
// from the module (the fakes here are small and specific to the load: no
// entity parsing, no recording beyond what the figures need), and it never
// talks to the real Telegram or model APIs.
//
//	go run -tags sqlite_fts5 ./bench/load -chats 50 -messages 20
//	go run -tags sqlite_fts5 ./bench/load -chats 1000 -messages 5 -limits=false
package main
