// Package obs is Kairos's observability: Prometheus metrics (updates,
// replies, stage latencies, tool calls, cell durations, model tokens, 429s,
// queue depth) and a slog handler that redacts the bot token and secret
// values from every log record, whatever the caller wrote.
//
// It must not make decisions for other packages; they report to it through
// small interfaces (bot.Metrics) or plain function calls.
package obs
