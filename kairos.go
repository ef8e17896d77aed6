// Package kairos holds the domain of the Kairos agent: the types that travel
// between its parts (messages, threads, sessions, memories, tool calls, code
// executions, the operator's policy) and the interfaces that join those parts
// (Model, Tool, CodeRunner and the stores).
//
// It imports the standard library only. Adapters (bot, openai, store,
// sandbox) implement its interfaces; services (clockstate, agent, tools)
// consume them. Nothing here performs I/O.
package kairos

import (
	"crypto/rand"
	"fmt"
)

// Version is the release of the binary; cmd/kairos may override it at link
// time with -ldflags "-X github.com/kairos-agent/kairos.Version=…".
var Version = "0.1.0-dev"

// AgentID is the agent identity that starts every thread key (CLOCK.md §7.2).
const AgentID = "main"

// NewID returns a random UUID (version 4, RFC 9562), the form of every
// stored row id and of cell, checkpoint and code-job ids.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
