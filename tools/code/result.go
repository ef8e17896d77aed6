package code

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// response is the JSON given back to the model.
type response struct {
	Success       bool            `json:"success"`
	Status        string          `json:"status,omitempty"`
	JobID         string          `json:"job_id,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Stdout        string          `json:"stdout,omitempty"`
	Error         string          `json:"error,omitempty"`
	ErrorCategory string          `json:"error_category,omitempty"`
	Checkpoint    *checkpointView `json:"checkpoint,omitempty"`
	DurationMS    *int64          `json:"duration_ms,omitempty"`
	Code          string          `json:"code,omitempty"`
	Attempts      int             `json:"attempts,omitempty"`
	Note          string          `json:"note,omitempty"`
}

// checkpointView is what the model sees of a checkpoint (the state itself
// stays on the host, referred to by state_blob_ref).
type checkpointView struct {
	ContinuationID string   `json:"continuation_id"`
	Cursor         string   `json:"cursor,omitempty"`
	StateBlobRef   string   `json:"state_blob_ref,omitempty"`
	Stage          string   `json:"current_stage,omitempty"`
	Completed      []string `json:"completed_steps,omitempty"`
}

// stored is the Result column of a checkpointed run.
type stored struct {
	Checkpoint *kairos.Checkpoint `json:"checkpoint"`
	Output     json.RawMessage    `json:"output,omitempty"`
}

// scrub returns a copy of res with every secret form removed from its
// texts, output and checkpoint (the runner scrubs too; this is the second
// line).
func (t *Tool) scrub(res *kairos.CellResult) *kairos.CellResult {
	r := *res
	r.Stdout, r.Stderr, r.Error = t.red.Scrub(r.Stdout), t.red.Scrub(r.Stderr), t.red.Scrub(r.Error)
	r.Output = t.red.ScrubJSON(r.Output)
	if r.Checkpoint != nil {
		cp := *r.Checkpoint
		cp.Cursor, cp.Stage, cp.StateBlobRef = t.red.Scrub(cp.Cursor), t.red.Scrub(cp.Stage), t.red.Scrub(cp.StateBlobRef)
		cp.ContinuationID = t.red.Scrub(cp.ContinuationID)
		cp.Completed = append([]string(nil), cp.Completed...)
		for i := range cp.Completed {
			cp.Completed[i] = t.red.Scrub(cp.Completed[i])
		}
		cp.State = t.red.ScrubJSON(cp.State)
		r.Checkpoint = &cp
	}
	return &r
}

// respond turns a finished run into the model's result.
func (t *Tool) respond(id string, o *outcome) *response {
	res := o.res
	d := res.Duration.Milliseconds()
	r := &response{
		Success:    res.Success && res.Checkpoint == nil,
		JobID:      id,
		DurationMS: &d,
		Note:       o.note,
	}
	stdout := strings.TrimRight(res.Stdout, "\n")
	switch {
	case len(res.Output) > 0:
		r.Result = capJSON(res.Output)
		r.Stdout = clipTail(stdout, maxSideBytes)
	case stdout != "":
		r.Result, _ = json.Marshal(clipTail(stdout, MaxResultBytes))
	}
	if !res.Success {
		r.ErrorCategory = res.ErrorCategory
		r.Error = clipTail(strings.TrimSpace(firstNonEmpty(res.Error, res.Stderr, "the cell failed")), maxSideBytes)
	}
	if cp := res.Checkpoint; cp != nil {
		r.Checkpoint = &checkpointView{
			ContinuationID: cp.ContinuationID, Cursor: kairos.Clip(cp.Cursor, 500), StateBlobRef: cp.StateBlobRef,
			Stage: kairos.Clip(cp.Stage, 200), Completed: cp.Completed,
		}
		if r.Error == "" {
			r.Error = "the cell checkpointed before finishing; resume it with execute, this job_id and code that reads `resume`"
		}
	}
	return r
}

// capJSON keeps JSON under MaxResultBytes; a longer value becomes its
// clipped text as a JSON string.
func capJSON(js json.RawMessage) json.RawMessage {
	if len(js) <= MaxResultBytes {
		return js
	}
	b, _ := json.Marshal(kairos.Clip(string(js), MaxResultBytes) + fmt.Sprintf(" [truncated: %d bytes in all]", len(js)))
	return b
}

// fromTrace rebuilds a result from its trace.
func fromTrace(e *kairos.CodeExecution) *kairos.CellResult {
	res := &kairos.CellResult{
		ID: e.ID, Success: e.Success, Stdout: e.Stdout, Stderr: e.Stderr, ExitCode: e.ExitCode,
		Duration: time.Duration(e.DurationMS) * time.Millisecond, ErrorCategory: e.ErrorCategory,
	}
	if !e.Success {
		res.Error = clipTail(strings.TrimRight(e.Stderr, "\n"), maxSideBytes)
	}
	if e.Result != "" {
		if cp, out, ok := parseStored(e.Result); ok {
			res.Checkpoint, res.Output = cp, out
		} else if json.Valid([]byte(e.Result)) {
			res.Output = json.RawMessage(e.Result)
		}
	}
	return res
}

// parseStored reads a checkpointed run's Result column.
func parseStored(s string) (*kairos.Checkpoint, json.RawMessage, bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &raw) != nil || raw["checkpoint"] == nil {
		return nil, nil, false
	}
	for k := range raw {
		if k != "checkpoint" && k != "output" {
			return nil, nil, false
		}
	}
	var st stored
	if json.Unmarshal([]byte(s), &st) != nil || st.Checkpoint == nil || st.Checkpoint.ContinuationID == "" {
		return nil, nil, false
	}
	return st.Checkpoint, st.Output, true
}

// clipTail keeps the last n bytes of s, on a rune boundary, marking a cut.
func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
