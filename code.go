package kairos

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// Task verbs (seed 004): every cell task declares exactly one.
const (
	VerbIdentify = "IDENTIFY"
	VerbMonitor  = "MONITOR"
	VerbProcure  = "PROCURE"
	VerbMaintain = "MAINTAIN"
	VerbResearch = "RESEARCH"
	VerbBuild    = "BUILD"
	VerbUpdate   = "UPDATE"
)

// Verbs lists the task verbs.
var Verbs = []string{VerbIdentify, VerbMonitor, VerbProcure, VerbMaintain, VerbResearch, VerbBuild, VerbUpdate}

// Error categories of a failed cell (seed 003 tracing, seed 004 budgets).
const (
	CatSyntax    = "syntax"
	CatImport    = "import"
	CatType      = "type"
	CatReference = "reference"
	CatTimeout   = "timeout"
	CatNetwork   = "network"
	CatMemory    = "memory"
	CatBudget    = "budget"
	CatRuntime   = "runtime"
	CatRejected  = "rejected" // refused before it ran (leak scan, policy)
)

// Budget is what one cell may spend (seed 004 timer and budget model).
type Budget struct {
	TimeBudget      time.Duration // hard wall-clock limit; 0 = use DeadlineAt
	DeadlineAt      time.Time     // alternative to TimeBudget
	MaxToolCalls    int           // host function calls of any kind
	MaxBytesRead    int64         // bytes read from the network
	MaxBytesWritten int64         // bytes sent to the network
	MaxNetworkCalls int
	MemoryLimit     int64 // bytes of WASM linear memory
	MaxOutputBytes  int64 // stdout + stderr + output()
	RiskTier        string
}

// DefaultBudget is what a cell may spend when nothing says otherwise. It
// is the one place these numbers live: DefaultPolicy's budgets.defaults
// are built from it, the sandbox fills a task's zero fields from it, and
// the code tool falls back to its time budget.
func DefaultBudget() Budget {
	return Budget{
		TimeBudget:      30 * time.Second,
		MaxToolCalls:    64,
		MaxBytesRead:    4 << 20,
		MaxBytesWritten: 1 << 20,
		MaxNetworkCalls: 16,
		MemoryLimit:     64 << 20,
		MaxOutputBytes:  64 << 10,
		RiskTier:        "low",
	}
}

// PolicyBudget is b as the policy writes it (milliseconds, MiB).
func (b Budget) PolicyBudget() CellBudget {
	return CellBudget{
		TimeBudgetMS:    int(b.TimeBudget / time.Millisecond),
		MaxToolCalls:    b.MaxToolCalls,
		MaxBytesRead:    b.MaxBytesRead,
		MaxBytesWritten: b.MaxBytesWritten,
		MaxNetworkCalls: b.MaxNetworkCalls,
		MemoryLimitMB:   int(b.MemoryLimit >> 20),
		MaxOutputBytes:  b.MaxOutputBytes,
		RiskTier:        b.RiskTier,
	}
}

// CellTask is one piece of code to run in a cell.
type CellTask struct {
	Code   string
	Verb   string // one of Verbs
	Budget Budget
	// Network capability handed to the cell (a subset of the policy).
	Network NetworkGrant
	// Secrets the cell may read with getSecret, by name. Values never leave
	// the host unredacted.
	Secrets map[string]string
	// Credentials makes getSecret and listSecrets exist in the cell
	// (features.credentials_access). False: they are absent and Secrets
	// are not used at all (authSecret names nothing either).
	Credentials bool
	// Now is the time the cell sees as Date.now() at its start.
	Now time.Time
	// ContinuationID resumes a checkpointed task (seed 004).
	ContinuationID string
	// Resume is the checkpoint being resumed, if any; the cell sees it as
	// the global `resume` (nil: resume is null).
	Resume *Checkpoint
	// Files are the current turn's attachments, listed by attachments()
	// and read by readAttachment(name) under the bytes-read budget.
	Files []CellFile
}

// CellFile is a file of the current turn a cell may read.
type CellFile struct {
	Name string
	Kind string // AttachVoice, AttachPhoto, AttachDocument, …
	MIME string
	Size int64
	// Text is what was read from the file for the turn (a document's
	// extracted text, a voice note's transcript); when set, the cell reads
	// it instead of the bytes.
	Text string
	// Open streams the bytes (nil when only Text is offered).
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// NetworkGrant is the network a cell may use. Enabled false means the
// network globals do not exist in the cell.
type NetworkGrant struct {
	Enabled           bool
	AllowHosts        []string // host or *.suffix patterns; empty = nothing
	Methods           []string // GET unless the policy allows more
	BlockedCategories []string
}

// Checkpoint is returned by a cell that stopped before it finished.
type Checkpoint struct {
	ContinuationID string          `json:"continuation_id"`
	Cursor         string          `json:"cursor,omitempty"`
	StateBlobRef   string          `json:"state_blob_ref,omitempty"`
	Completed      []string        `json:"completed_steps,omitempty"`
	Stage          string          `json:"current_stage,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
}

// CellResult is the structured result of a cell. A cell that hits a budget
// is a result with Success false and a category, never an error.
type CellResult struct {
	ID            string
	Success       bool
	Output        json.RawMessage // the last value given to output(), as JSON
	Stdout        string          // scrubbed of secrets
	Stderr        string          // scrubbed of secrets
	ExitCode      int
	Duration      time.Duration
	ErrorCategory string // one of the Cat constants when Success is false
	Error         string // scrubbed error text
	Checkpoint    *Checkpoint
	NetworkCalls  int
	ToolCalls     int
	BytesRead     int64
	BytesWritten  int64
}

// CodeRunner runs cells. Implementations must contain every failure of the
// cell in the result; an error means the runner itself failed.
type CodeRunner interface {
	Run(ctx context.Context, task *CellTask) (*CellResult, error)
}

// CodeExecution is the trace of one execution (seed 003 code_executions).
type CodeExecution struct {
	ID             string
	Code           string
	Stdout         string
	Stderr         string
	ExitCode       int
	DurationMS     int64
	Success        bool
	SessionID      string
	UserKey        string
	TriggerMessage string
	LLMReasoning   string
	ErrorCategory  string
	Verb           string
	RiskTier       string
	Result         string // output() JSON or checkpoint JSON
	CreatedAt      time.Time
}

// CodeStats are the totals /codestats shows.
type CodeStats struct {
	Total         int
	Successes     int
	Failures      int
	AvgDurationMS float64
	Categories    []CategoryCount // most frequent first
}

// CategoryCount is one error category and its count.
type CategoryCount struct {
	Category string
	Count    int
}

// CodeExecutionStore records and reports code executions.
//
// Errors are EINTERNAL (the database) unless a method says otherwise.
type CodeExecutionStore interface {
	// RecordExecution stores one cell's run (its id is the cell's).
	RecordExecution(ctx context.Context, e *CodeExecution) error
	// FindExecution returns a run by id: ENOTFOUND when there is none.
	FindExecution(ctx context.Context, id string) (*CodeExecution, error)
	// CodeStats sums the runs since the time given (/codestats).
	CodeStats(ctx context.Context, since time.Time) (*CodeStats, error)
	// CodeFailures returns the n newest failed runs (/codefailures).
	CodeFailures(ctx context.Context, n int) ([]*CodeExecution, error)
	// PruneExecutions deletes executions created before t; it returns how many.
	PruneExecutions(ctx context.Context, before time.Time) (int64, error)
}

// HostAllowed reports whether host is on an allow list: an exact host, or
// "*.suffix" for any subdomain of suffix (not suffix itself). Case and a
// trailing dot do not matter.
func HostAllowed(host string, list []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	for _, p := range list {
		p = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(p)), ".")
		if suf, ok := strings.CutPrefix(p, "*."); ok {
			if suf != "" && strings.HasSuffix(host, "."+suf) {
				return true
			}
		} else if p != "" && host == p {
			return true
		}
	}
	return false
}
