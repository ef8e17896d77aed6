// Package mcp is Kairos's Model Context Protocol client: it connects to the
// servers the policy's `mcp` section lists (stdio commands it starts and
// supervises, or streamable HTTP endpoints), and offers their allowed
// tools to the agent as kairos.Tools named <server>__<tool>.
//
// It is an adapter: it imports the root package and the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) only. It decides nothing about
// approvals or taint: every tool declares its action (mcp.read or
// mcp.write, from the policy's impact; unknown means write) and every
// result it returns is marked tainted, and the agent applies its envelopes,
// approvals and fences as it does for the built-in tools.
//
// It must not log or return secret values (bearer tokens, secret_env):
// every KAIROS_SECRET_<NAME> value, in raw, encoded or split form, is
// scrubbed out of tool descriptions, schemas, results and error texts
// before the model sees them (redact.go), since a server can echo what it
// was given. Descriptions are data (text.go): one clipped line, without
// control, bidirectional or invisible characters. A stdio server runs in
// its own process group, killed whole when its connection ends, and on
// Linux dies with Kairos (proc_linux.go). A crashed, hung or unreachable server must cost one error to
// the model, never a turn or the process.
package mcp
