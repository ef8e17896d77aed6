package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/tokens"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/policy"
)

func init() {
	register(Command{Name: "model check", Usage: "[--write] [--timeout DURATION]",
		Short: "probe the endpoint and models: chat, streaming, tools, vision, embeddings, transcription, context window",
		Long: `Probes OPENAI_BASE_URL and each configured model (KAIROS_MODEL and the
fallbacks, KAIROS_VISION_MODEL, KAIROS_EMBEDDING_MODEL, KAIROS_TRANSCRIBE_MODEL;
the policy's agent.model and agent.fallback_models win as they do at run time):
the model list, a plain chat call, streaming, a native tool call (and prompted
tool calling when native fails), image input, embeddings and their dimension,
transcription, and the context window where the server or the policy says it.
Prints one line per capability with what it saw.

--write prints the findings as the policy's models: section on stdout (the
capability lines then go to stderr), to paste into the policy file.

Each probe is a small real request (a few tokens; the image is 16x16 pixels,
the audio half a second of silence).

Exit status: 0 ok, 1 when a chat model does not answer a plain chat call,
2 usage or configuration error.`,
		Flags: func(fs *flag.FlagSet) {
			fs.Bool("write", false, "print the result as the policy's models: section")
			fs.Duration("timeout", time.Minute, "limit for each probe")
		},
		Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			timeout, _ := time.ParseDuration(inv.String("timeout"))
			return m.runModelCheck(ctx, inv.Bool("write"), timeout)
		},
	})
}

// modelReport is what the probes found about one model.
type modelReport struct {
	name       string
	chat       bool
	window     int
	windowFrom string
	tools      string // native | prompted | off, "" when not probed
	vision     *bool
	thinking   string // template | tagged, "" when unknown (model_think.go)
	// uncertain says which capabilities a probe could not settle (one
	// probe missed): --write prints them as comments, not values.
	uncertain []string
}

// checker runs the probes and prints their lines.
type modelChecker struct {
	m       *Main
	out     io.Writer
	client  *openai.Client
	pol     *kairos.Policy
	timeout time.Duration
	listed  map[string]openai.ModelInfo
	failed  bool
}

func (c *modelChecker) line(capability, subject, format string, args ...any) {
	fmt.Fprintf(c.out, "%-13s %s: %s\n", capability, subject, fmt.Sprintf(format, args...))
}

func (c *modelChecker) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, c.timeout)
}

func (m *Main) runModelCheck(ctx context.Context, write bool, timeout time.Duration) error {
	res, err := policy.LoadFile(m.Config.PolicyPath)
	if err != nil {
		fmt.Fprintln(m.Stderr, err.Error())
		return &quietError{code: 2}
	}
	if timeout <= 0 {
		timeout = time.Minute
	}
	out := m.Stdout
	if write {
		out = m.Stderr
	}
	c := &modelChecker{m: m, out: out, pol: res.Policy, timeout: timeout, listed: map[string]openai.ModelInfo{},
		client: openai.New(openai.Config{BaseURL: m.Config.OpenAIBaseURL, APIKey: m.Config.OpenAIKey, Timeout: timeout,
			EmbeddingModel: m.Config.EmbeddingModel, EmbeddingDimensions: m.Config.EmbeddingDimensions,
			Logger: slog.New(slog.DiscardHandler), CountTokens: tokens.Count})}
	c.listModels(ctx)
	var reports []*modelReport
	for _, name := range c.chatModels() {
		reports = append(reports, c.checkChatModel(ctx, name))
	}
	if v := m.Config.VisionModel; v != "" && !hasReport(reports, v) {
		r := &modelReport{name: v}
		c.checkVision(ctx, r)
		reports = append(reports, r)
	}
	c.checkEmbeddings(ctx)
	c.checkTranscription(ctx)
	if write {
		writeModelsSection(m.Stdout, reports)
	}
	if c.failed {
		return &quietError{code: 1}
	}
	return nil
}

func hasReport(rs []*modelReport, name string) bool {
	for _, r := range rs {
		if r.name == name {
			return true
		}
	}
	return false
}

// chatModels lists the chat models in the order the agent tries them.
func (c *modelChecker) chatModels() []string {
	primary := c.pol.Agent.Model
	if primary == "" {
		primary = c.m.Config.Model
	}
	fallbacks := c.pol.Agent.FallbackModels
	if len(fallbacks) == 0 {
		fallbacks = c.m.Config.FallbackModels
	}
	out := []string{primary}
	for _, f := range fallbacks {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func (c *modelChecker) listModels(ctx context.Context) {
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	models, err := c.client.Models(cctx)
	if err != nil {
		c.line("models", c.m.Config.OpenAIBaseURL, "FAILED: %s (many servers answer chat without listing models)", probeErr(err))
		return
	}
	var names []string
	for _, mi := range models {
		c.listed[mi.ID] = mi
		names = append(names, mi.ID)
	}
	shown := names
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("… %d more", len(names)-8))
	}
	c.line("models", c.m.Config.OpenAIBaseURL, "ok, %d listed (%s)", len(names), strings.Join(shown, ", "))
}

func (c *modelChecker) checkChatModel(ctx context.Context, name string) *modelReport {
	r := &modelReport{name: name}
	if len(c.listed) > 0 {
		if _, ok := c.listed[name]; !ok {
			c.line("listed", name, "not in the server's list (the name may be wrong)")
		}
	}
	if !c.checkChat(ctx, r) {
		c.failed = true
		return r
	}
	c.checkStream(ctx, r)
	c.checkThinking(ctx, r)
	c.checkTools(ctx, r)
	c.checkVision(ctx, r)
	c.checkWindow(ctx, r)
	return r
}

func probeRequest(model, prompt string) kairos.ChatRequest {
	return kairos.ChatRequest{Model: model, MaxTokens: 64, Messages: []kairos.ChatMessage{
		{Role: kairos.RoleSystem, Content: "You are a terse assistant."},
		{Role: kairos.RoleUser, Content: prompt}}}
}

func (c *modelChecker) checkChat(ctx context.Context, r *modelReport) bool {
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := c.client.Chat(cctx, probeRequest(r.name, "Reply with the single word OK."), nil)
	if err != nil {
		c.line("chat", r.name, "FAILED: %s", probeErr(err))
		return false
	}
	r.chat = true
	c.line("chat", r.name, "ok in %s, answered %q (%d prompt + %d completion tokens%s)", time.Since(start).Round(time.Millisecond),
		kairos.Clip(resp.Message.Content, 40), resp.Usage.PromptTokens, resp.Usage.CompletionTokens, usageNote(resp.Usage))
	return true
}

func usageNote(u kairos.Usage) string {
	var notes []string
	if u.ReasoningTokens > 0 {
		notes = append(notes, fmt.Sprintf("%d thinking, hidden", u.ReasoningTokens))
	}
	if u.Estimated {
		notes = append(notes, "estimated: the server reported none")
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

func (c *modelChecker) checkStream(ctx context.Context, r *modelReport) {
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	deltas := 0
	resp, err := c.client.Chat(cctx, probeRequest(r.name, "Count from one to five in words."), func(string) { deltas++ })
	if err != nil {
		c.line("streaming", r.name, "FAILED: %s", probeErr(err))
		return
	}
	usage := "usage reported"
	if resp.Usage.Estimated {
		usage = "no usage chunk: tokens are estimated"
	}
	c.line("streaming", r.name, "ok, %d updates, %s", deltas, usage)
}
