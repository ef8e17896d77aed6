// Package kairos holds the domain of the Kairos agent: the types that travel
// between its parts (messages, threads, sessions, memories, tool calls, code
// executions, the operator's policy) and the interfaces that join those parts
// (Model, Tool, CodeRunner and the stores).
//
// It imports the standard library only. Adapters (bot, openai, store,
// sandbox) implement its interfaces; services (clockstate, agent, tools)
// consume them. Nothing here performs I/O.
package kairos

// Version is the release of the binary; cmd/kairos may override it at link
// time with -ldflags "-X github.com/kairos-agent/kairos.Version=…".
var Version = "0.1.0-dev"

// AgentID is the agent identity that starts every thread key (CLOCK.md §7.2).
const AgentID = "main"
