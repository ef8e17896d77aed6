// Package testkit holds in-process fakes of the outside services Kairos
// talks to, for tests only:
//
//   - FakeTelegram: a Telegram Bot API server (httptest) with real update
//     queue semantics (long polling, offsets, 409 conflicts, webhook
//     delivery with the secret header), Telegram's checks on outgoing text
//     (HTML and MarkdownV2 entity parsing, 4096 UTF-16 units, empty text,
//     "message is not modified") and reply markup (BUTTON_COPY_TEXT_INVALID,
//     BUTTON_DATA_INVALID), injected 429/5xx/network failures, and records
//     of every call, sent message, edit, chat action and callback answer.
//   - FakeOpenAI: an OpenAI-compatible server for /v1/chat/completions
//     (streaming SSE and plain, tool calls with streamed argument
//     fragments, usage), /v1/embeddings (deterministic hashed
//     bag-of-words vectors) and /v1/models, scripted per model with queued
//     Replies or a Handler, recording every decoded request.
//
// Tests wait with Deadline (a context that ends shortly before the test's
// own go test -timeout) and WaitFor (poll a condition until then): their
// only failure deadline is the test's, never a fixed duration that a busy
// machine overruns while nothing is wrong.
//
// Both fakes are faithful enough that the real client libraries
// (github.com/go-telegram/bot, github.com/sashabaranov/go-openai) run
// against them unchanged; their own tests prove it.
//
// Production code must never import this package. It must not reach the
// network beyond loopback, sleep to wait for something (waiting helpers use
// channels, or WaitFor's ticker where no channel announces the change), or
// hold secrets.
package testkit
