package obs_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/obs"
)

func TestMetricsExposition(t *testing.T) {
	m := obs.NewMetrics()
	m.UpdateReceived()
	m.UpdateReceived()
	m.ReplySent("send")
	m.TooManyRequests()
	m.QueueDepth(3)
	m.StageLatency("model", 30*time.Millisecond)
	m.ToolCall("search", "ok", 2*time.Millisecond)
	m.ModelCall("gpt", "ok", 100, 7, time.Millisecond)
	var buf bytes.Buffer
	m.Write(&buf)
	out := buf.String()
	for _, want := range []string{
		"kairos_updates_total 2\n",
		`kairos_replies_total{kind="send"} 1`,
		"kairos_telegram_429_total 1\n",
		"kairos_queue_depth 3\n",
		`kairos_stage_seconds_bucket{stage="model",le="0.025"} 1`,
		`kairos_stage_seconds_bucket{stage="model",le="0.05"} 2`,
		`kairos_stage_seconds_bucket{stage="model",le="+Inf"} 2`,
		`kairos_stage_seconds_count{stage="model"} 2`,
		`kairos_tool_calls_total{tool="search",outcome="ok"} 1`,
		`kairos_model_tokens_total{model="gpt",kind="prompt"} 100`,
		"# TYPE kairos_stage_seconds histogram",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}
