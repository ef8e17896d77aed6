// Package bot is Kairos's Telegram adapter: it long-polls (or receives
// webhooks from) the Bot API, persists every update before the offset moves
// past it, admits only allowed users, runs each chat's messages in order on
// a bounded worker pool, streams answers with throttled edits, renders the
// model's Markdown as safe Telegram HTML, asks for approvals with inline
// keyboards, and sends within Telegram's rate limits.
//
// It is the only importer of github.com/go-telegram/bot (for the Bot API
// types). It must not decide what to answer: that is the agent's job, reached
// through the Handler interface.
package bot
