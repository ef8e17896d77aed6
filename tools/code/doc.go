// Package code is the model-facing `code` tool (seed 003, Tool 2):
//
//   - execute runs model-written JavaScript in a cell through a
//     kairos.CodeRunner, with the policy's budget (budgets.defaults, then
//     per_verb, then per_risk_tier; timeout_ms honoured but capped by the
//     time budget) and network grant; a run still going after AsyncAfter
//     answers with a job_id and finishes in the background;
//   - generate asks a coding model (a separate call, no tools, its own
//     short system prompt) for code for a task, runs it and feeds failures
//     back, up to three attempts;
//   - status reports a job, from memory or from the trace store.
//
// Every run is traced in a kairos.CodeExecutionStore (seed 003's
// code_executions), and FormatStats / FormatFailures render the bot's
// /codestats and /codefailures.
//
// Classification and capabilities. A cell's verb is inferred (the tool's
// parameters are the contract's and carry no verb): RESEARCH when the code
// uses the network and the policy enables it, BUILD otherwise. Action
// classifies execute by a static scan of the code (Scan): a possible
// network write, when the policy's methods allow one, is the impactful
// action "code.network_write"; the use of a secret, when secrets are
// configured, is "code.secrets". The cell then gets only what its
// classification covered: a GET/HEAD-only grant unless it was classified
// as writing, and no secrets unless it was classified as using them. A
// scan that misses something makes the cell fail; it never lets it do more
// than was approved. Code written by generate that would be impactful is
// returned to the model to run with execute (and so through approval), not
// run.
//
// Secrets: values never enter results, traces, prompts or logs; every text
// that comes back from a cell is scrubbed with redact.Redactor (a second
// line behind the runner's own scrubbing). Cell output is untrusted: the
// results are marked Tainted.
//
// This package must not import the sandbox, store or any other adapter,
// must not decide approvals (it reports impact; the agent asks), and must
// not start cells outside Call.
package code
