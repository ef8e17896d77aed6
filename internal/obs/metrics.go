package obs

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Metrics is a small Prometheus registry written for Kairos: counters,
// gauges and histograms with labels, exposed in the text format 0.0.4.
// (client_golang would pull protobuf into a binary whose idle memory we
// keep small; what we need fits here.)
type Metrics struct {
	mu     sync.Mutex
	series map[string]*family
	start  time.Time
	// activity is the last hour per minute, for the console.
	activity *Activity
}

type family struct {
	name, help, kind string
	buckets          []float64
	values           map[string]*sample // by rendered label set
}

type sample struct {
	labels string
	value  float64
	counts []uint64 // histogram buckets (cumulative at exposition)
	sum    float64
	n      uint64
}

var latencyBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// NewMetrics returns a registry with Kairos's families declared.
func NewMetrics() *Metrics {
	m := &Metrics{series: map[string]*family{}, start: time.Now(), activity: NewActivity(nil)}
	m.declare("kairos_updates_total", "counter", "Telegram updates received (new, after de-duplication).", nil)
	m.declare("kairos_replies_total", "counter", "Messages sent or edited, by kind.", nil)
	m.declare("kairos_telegram_429_total", "counter", "Telegram 429 Too Many Requests answers.", nil)
	m.declare("kairos_queue_depth", "gauge", "Updates waiting behind their chat's earlier ones.", nil)
	m.declare("kairos_stage_seconds", "histogram", "Latency per pipeline stage.", latencyBuckets)
	m.declare("kairos_tool_calls_total", "counter", "Tool calls by tool and outcome.", nil)
	m.declare("kairos_cell_seconds", "histogram", "Code cell durations by outcome.", latencyBuckets)
	m.declare("kairos_model_tokens_total", "counter", "Model tokens by model and kind.", nil)
	m.declare("kairos_model_calls_total", "counter", "Model calls by model and outcome.", nil)
	m.declareMedia()
	m.declareMCP()
	m.declareUsage()
	return m
}

func (m *Metrics) declare(name, kind, help string, buckets []float64) {
	m.series[name] = &family{name: name, kind: kind, help: help, buckets: buckets, values: map[string]*sample{}}
}

func labels(kv ...string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i] + "=" + strconv.Quote(kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

func (m *Metrics) get(name string, kv ...string) (*family, *sample) {
	f := m.series[name]
	l := labels(kv...)
	s := f.values[l]
	if s == nil {
		s = &sample{labels: l}
		if f.kind == "histogram" {
			s.counts = make([]uint64, len(f.buckets))
		}
		f.values[l] = s
	}
	return f, s
}

func (m *Metrics) add(name string, v float64, kv ...string) {
	m.mu.Lock()
	_, s := m.get(name, kv...)
	s.value += v
	m.mu.Unlock()
}

func (m *Metrics) set(name string, v float64, kv ...string) {
	m.mu.Lock()
	_, s := m.get(name, kv...)
	s.value = v
	m.mu.Unlock()
}

func (m *Metrics) observe(name string, v float64, kv ...string) {
	m.mu.Lock()
	f, s := m.get(name, kv...)
	for i, ub := range f.buckets {
		if v <= ub {
			s.counts[i]++
		}
	}
	s.sum += v
	s.n++
	m.mu.Unlock()
}

// UpdateReceived counts a new update.
func (m *Metrics) UpdateReceived() { m.add("kairos_updates_total", 1) }

// ReplySent counts a sent or edited message.
func (m *Metrics) ReplySent(kind string) { m.add("kairos_replies_total", 1, "kind", kind) }

// TooManyRequests counts a Telegram 429.
func (m *Metrics) TooManyRequests() { m.add("kairos_telegram_429_total", 1) }

// QueueDepth sets the number of queued updates.
func (m *Metrics) QueueDepth(n int) { m.set("kairos_queue_depth", float64(n)) }

// StageLatency observes one stage's latency.
func (m *Metrics) StageLatency(stage string, d time.Duration) {
	m.observe("kairos_stage_seconds", d.Seconds(), "stage", stage)
	if stage == "update" {
		m.activity.Turn()
	}
}

// Activity is the last hour per minute (the console's overview).
func (m *Metrics) Activity() *Activity { return m.activity }

// ToolCall counts a tool call.
func (m *Metrics) ToolCall(tool, outcome string, d time.Duration) {
	m.add("kairos_tool_calls_total", 1, "tool", tool, "outcome", outcome)
	m.StageLatency("tool_"+tool, d)
}

// Cell observes a code cell's duration.
func (m *Metrics) Cell(success bool, d time.Duration) {
	o := "ok"
	if !success {
		o = "failed"
	}
	m.observe("kairos_cell_seconds", d.Seconds(), "outcome", o)
}

// ModelCall counts a model call and its tokens.
func (m *Metrics) ModelCall(model, outcome string, prompt, completion int, d time.Duration) {
	m.add("kairos_model_calls_total", 1, "model", model, "outcome", outcome)
	m.add("kairos_model_tokens_total", float64(prompt), "model", model, "kind", "prompt")
	m.add("kairos_model_tokens_total", float64(completion), "model", model, "kind", "completion")
	m.StageLatency("model", d)
	m.activity.Model(d, outcome != "ok")
}

// Handler serves the text exposition.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.Write(w)
	})
}

// Write writes every family in the Prometheus text format.
func (m *Metrics) Write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.series))
	for n := range m.series {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := m.series[n]
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		keys := make([]string, 0, len(f.values))
		for k := range f.values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s := f.values[k]
			if f.kind != "histogram" {
				fmt.Fprintf(w, "%s%s %s\n", f.name, s.labels, num(s.value))
				continue
			}
			for i, ub := range f.buckets {
				fmt.Fprintf(w, "%s_bucket%s %d\n", f.name, withLE(s.labels, num(ub)), s.counts[i])
			}
			fmt.Fprintf(w, "%s_bucket%s %d\n", f.name, withLE(s.labels, "+Inf"), s.n)
			fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", f.name, s.labels, num(s.sum), f.name, s.labels, s.n)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "# HELP go_goroutines Goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
	fmt.Fprintf(w, "# HELP go_memstats_heap_inuse_bytes Heap in use.\n# TYPE go_memstats_heap_inuse_bytes gauge\ngo_memstats_heap_inuse_bytes %d\n", ms.HeapInuse)
	fmt.Fprintf(w, "# HELP process_uptime_seconds Seconds since start.\n# TYPE process_uptime_seconds gauge\nprocess_uptime_seconds %s\n", num(time.Since(m.start).Seconds()))
}

func withLE(l, le string) string {
	if l == "" {
		return `{le="` + le + `"}`
	}
	return l[:len(l)-1] + `,le="` + le + `"}`
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
