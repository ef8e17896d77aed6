package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/policy"
)

// probeAnswers answers model check's probes as a capable model would: a
// tool call when tools are offered (natively or in the prompt), a colour
// for an image, text otherwise.
func probeAnswers(req testkit.ChatRequest) testkit.Reply {
	switch {
	case len(req.Tools) > 0:
		return testkit.ToolReply(testkit.ToolCall{Name: "get_weather", Arguments: `{"city":"Paris"}`})
	case strings.Contains(req.SystemPrompt(), "<tool_call>"):
		return testkit.TextReply("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>")
	case len(req.Messages) > 1 && len(req.Messages[1].Images) > 0:
		return testkit.TextReply("Red.")
	}
	return testkit.TextReply("OK")
}

func lineOf(t *testing.T, out, capability string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, capability+" ") {
			return l
		}
	}
	t.Fatalf("no %q line in:\n%s", capability, out)
	return ""
}

func TestModelCheckOpenAI(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_MODEL"] = "gpt-4o-mini"
	e.vars["KAIROS_EMBEDDING_MODEL"] = "text-embedding-3-small"
	e.llm.SetHandler(probeAnswers)
	if code := e.main().Main(context.Background(), []string{"model", "check"}); code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, e.out.String(), e.logs.String())
	}
	out := e.out.String()
	t.Logf("kairos model check:\n%s", out)
	for capability, want := range map[string]string{
		"models":        "ok, 2 listed (gpt-4o-mini, text-embedding-3-small)",
		"chat":          `gpt-4o-mini: ok in`,
		"streaming":     "usage reported",
		"tools":         `gpt-4o-mini: native: called get_weather {"city":"Paris"}`,
		"vision":        `ok, said "Red."`,
		"context":       "128000 tokens (from the policy or the built-in table; the server does not say)",
		"embeddings":    "text-embedding-3-small: ok, 64 dimensions",
		"transcription": "whisper-1: ok",
	} {
		if l := lineOf(t, out, capability); !strings.Contains(l, want) {
			t.Errorf("%s line %q lacks %q", capability, l, want)
		}
	}
	if strings.Contains(out, "FAILED") {
		t.Errorf("a probe failed:\n%s", out)
	}
}

// TestModelCheckLocalServer: llama-server started without --jinja and
// without a projector, streaming without usage: tools are prompted,
// vision is off, usage is estimated, and --write prints a models section
// the policy accepts.
func TestModelCheckLocalServer(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_MODEL"] = "qwen2.5-3b-instruct"
	e.llm.SetHandler(probeAnswers)
	e.llm.SetQuirks("", testkit.Quirks{RejectTools: testkit.LlamaCppNoJinja, RejectImages: testkit.LlamaCppNoVision, NoUsage: true})
	e.llm.SetModelFields("qwen2.5-3b-instruct", map[string]any{"meta": map[string]any{"n_ctx_train": 32768}})
	if code := e.main().Main(context.Background(), []string{"model", "check", "--write"}); code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, e.out.String(), e.logs.String())
	}
	lines := e.logs.String()
	t.Logf("kairos model check --write:\n%s\n%s", lines, e.out.String())
	for capability, want := range map[string]string{
		"tools":     "prompted: the server refuses native tools (",
		"vision":    "no: ",
		"streaming": "no usage chunk",
		"context":   "32768 tokens (from the server's model list)",
		"chat":      "estimated",
	} {
		if l := lineOf(t, lines, capability); !strings.Contains(l, want) {
			t.Errorf("%s line %q lacks %q", capability, l, want)
		}
	}
	p, err := policy.Parse("written.yaml", []byte(e.out.String()))
	if err != nil {
		t.Fatalf("--write output is not a valid policy:\n%s\n%v", e.out.String(), err)
	}
	spec, ok := p.Model("qwen2.5-3b-instruct")
	if !ok || spec.ContextWindow != 32768 || spec.ToolCalling != "prompted" || spec.Vision == nil || *spec.Vision {
		t.Errorf("written spec %+v", spec)
	}
}

func TestModelCheckChatFailsExits1(t *testing.T) {
	e := newEnv(t)
	e.llm.FailModel("test-model", 404)
	if code := e.main().Main(context.Background(), []string{"model", "check"}); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, e.out.String())
	}
	if l := lineOf(t, e.out.String(), "chat"); !strings.Contains(l, "test-model: FAILED: ") || !strings.Contains(l, "HTTP 404") {
		t.Errorf("chat line %q", l)
	}
}

func TestModelCheckHelp(t *testing.T) {
	e := newEnv(t)
	if code := e.main().Main(context.Background(), []string{"model", "check", "--help"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(e.out.String(), "--write") || len(e.llm.Requests()) != 0 {
		t.Errorf("help printed %q and made %d requests", e.out.String(), len(e.llm.Requests()))
	}
}

// TestModelCheckVisionOutageIsNotNoVision: a server error on the image
// probe says so; it does not write vision: false.
func TestModelCheckVisionOutageIsNotNoVision(t *testing.T) {
	e := newEnv(t)
	e.llm.SetHandler(func(r testkit.ChatRequest) testkit.Reply {
		if len(r.Messages) > 1 && len(r.Messages[1].Images) > 0 {
			return testkit.ErrorReply(503, "")
		}
		return probeAnswers(r)
	})
	if code := e.main().Main(context.Background(), []string{"model", "check", "--write"}); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.logs.String())
	}
	if l := lineOf(t, e.logs.String(), "vision"); !strings.Contains(l, "FAILED (not known whether it reads images)") {
		t.Errorf("vision line %q", l)
	}
	if strings.Contains(e.out.String(), "vision:") {
		t.Errorf("--write guessed vision:\n%s", e.out.String())
	}
}

// TestModelCheckServedWindow: the window the local server actually
// serves wins over the trained length its model list gives; Ollama
// without num_ctx is said to be unknown, with the reason.
func TestModelCheckServedWindow(t *testing.T) {
	parallel(t)
	tests := []struct {
		name  string
		setup func(f *testkit.FakeOpenAI)
		want  string
	}{
		{"llama-server", func(f *testkit.FakeOpenAI) {
			f.SetModelFields("local", map[string]any{"meta": map[string]any{"n_ctx_train": 32768}})
			f.SetRoute("GET", "/props", testkit.LlamaCppProps(8192))
		}, "8192 tokens (from llama-server /props)"},
		{"ollama num_ctx", func(f *testkit.FakeOpenAI) {
			f.SetRoute("POST", "/api/show", testkit.OllamaShow(32768, 16384))
		}, "16384 tokens (from Ollama num_ctx)"},
		{"ollama default", func(f *testkit.FakeOpenAI) {
			f.SetRoute("POST", "/api/show", testkit.OllamaShow(32768, 0))
		}, "unknown: Ollama serves it with its default context (OLLAMA_CONTEXT_LENGTH or num_ctx; trained for 32768 tokens)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.vars["KAIROS_MODEL"] = "local"
			e.llm.SetHandler(probeAnswers)
			tc.setup(e.llm)
			if code := e.main().Main(context.Background(), []string{"model", "check"}); code != 0 {
				t.Fatalf("exit %d:\n%s", code, e.out.String())
			}
			if l := lineOf(t, e.out.String(), "context"); !strings.Contains(l, tc.want) {
				t.Errorf("context line %q lacks %q", l, tc.want)
			}
		})
	}
}

// TestModelCheckThinking: a model whose chat template opens <think> (its
// answers carry only the closing tag) is reported so, and --write says
// thinking: template, which the policy accepts (issue 31, item 7).
func TestModelCheckThinking(t *testing.T) {
	e := newEnv(t)
	e.vars["KAIROS_MODEL"] = "qwen3-4b-thinking"
	e.llm.SetHandler(func(req testkit.ChatRequest) testkit.Reply {
		if len(req.Tools) > 0 || strings.Contains(req.SystemPrompt(), "<tool_call>") || len(req.Messages) > 1 && len(req.Messages[1].Images) > 0 {
			return probeAnswers(req)
		}
		return testkit.TextReply("The user wants one word. I will say it.</think>\n\nOK")
	})
	if code := e.main().Main(context.Background(), []string{"model", "check", "--write"}); code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, e.out.String(), e.logs.String())
	}
	if l := lineOf(t, e.logs.String(), "thinking"); !strings.Contains(l, "qwen3-4b-thinking: template: the chat template opens <think>") {
		t.Errorf("thinking line %q", l)
	}
	if l := lineOf(t, e.logs.String(), "chat"); strings.Contains(l, "user wants") {
		t.Errorf("the chat line shows the thought: %q", l)
	}
	p, err := policy.Parse("written.yaml", []byte(e.out.String()))
	if err != nil {
		t.Fatalf("--write output is not a valid policy:\n%s\n%v", e.out.String(), err)
	}
	if spec, _ := p.Model("qwen3-4b-thinking"); spec.Thinking != "template" {
		t.Errorf("written spec %+v:\n%s", spec, e.out.String())
	}
}
