package kairos

import (
	"context"
	"encoding/json"
	"time"
)

// Tool is one model-facing tool (search, code, memory). Tools validate their
// own arguments and answer with structured JSON. An error returned by Call
// becomes a result the model can read ({"success":false,"error":…}); it
// never ends the turn.
type Tool interface {
	// Spec is the tool as offered to the model. It may depend on the policy
	// (a disabled action is absent from the schema).
	Spec() ToolSpec
	// Action names the action a call performs ("search", "memory.forget",
	// "code.execute", …) and whether it is impactful (CLOCK.md §8.2) and so
	// needs a human's approval. It must not perform the action.
	Action(ctx context.Context, inv *ToolInvocation) (ToolAction, error)
	// Call performs the call.
	Call(ctx context.Context, inv *ToolInvocation) (*ToolResult, error)
}

// ToolAction describes what a tool call would do, before it is done.
type ToolAction struct {
	Name       string // "memory.forget", "code.execute", "search", …
	Impactful  bool   // deletes data, writes to the network, uses secrets, …
	Reason     string // why it is impactful, shown in the approval request
	Capability string // the capability it needs: search, memory.read, memory.write, code, code.network
	// AlwaysAsk makes the call wait for a human's yes whatever the policy
	// says (a skill's create, update and rollback: seed 004's approval gate).
	AlwaysAsk bool
	// Detail is the whole of what is to be approved (a skill's code or
	// diff, its tests and their results), shown with the approval request;
	// a front end sends it as a document when it is long.
	Detail string
	// Summary says in one sentence, as a question, what the call will do
	// ("Forget the memory ‘prefers tea’ (saved Tuesday)?"); the approval
	// request leads with it.
	Summary string
	// Target is what the call is about, normalised, for a standing grant
	// (grant.go): a host and method, an MCP tool and the arguments that
	// matter, a skill and its version. Empty: it can only be approved once.
	Target string
	// TargetLabel is Target as people read it: what "Always here" covers.
	TargetLabel string
	// UnlistedHost: the call writes to a host outside network.allow_list
	// (or to one it does not name), see NeverGrantUnlistedHost.
	UnlistedHost bool
}

// ToolInvocation is one call with the context it runs in.
type ToolInvocation struct {
	CallID         string
	Name           string
	Arguments      json.RawMessage
	UserKey        string
	ThreadKey      string
	SessionID      string
	ChatKind       string
	TriggerMessage string     // the user's message that started the turn
	Reasoning      string     // the model's text that came with the call
	Now            time.Time  // the turn's time (the message's date)
	Zone           string     // the user's IANA time zone ("" when unknown)
	Tainted        bool       // untrusted content is already in the turn
	TaintSource    string     // what it was, when Tainted ("search", "a document", …)
	Files          []CellFile // the turn's attachments (code cells may read them)
	ApprovedBy     string     // who approved the call, when a human was asked
}

// ToolResult is a tool's answer.
type ToolResult struct {
	Content json.RawMessage // JSON given back to the model
	Tainted bool            // holds untrusted content (web pages, code output)
}

// ExternalTool is a tool another program provides: an MCP server's tool,
// named <server>__<tool>. Its action is not named after it (a tool named
// "notes__search" performs "mcp.read"), so it says which action it
// performs, for the mode's envelopes to decide whether it is offered.
type ExternalTool interface {
	Tool
	// Server is the providing server's name in the policy.
	Server() string
	// OfferedAction is the action every call performs (ActionMCPRead or
	// ActionMCPWrite).
	OfferedAction() string
}
