package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/openai"
)

var probeTool = kairos.ToolSpec{Name: "get_weather", Description: "Current weather for a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

const probeToolPrompt = "What is the weather in Paris right now? Use the get_weather tool."

// checkTools tries a native tool call, then prompted tool calling when
// the server refuses tools or the model makes no call.
func (c *modelChecker) checkTools(ctx context.Context, r *modelReport) {
	if spec, _ := c.pol.Model(r.name); spec.ToolCalling == kairos.ToolCallingOff {
		r.tools = kairos.ToolCallingOff
		c.line("tools", r.name, "off (policy models.%s.tool_calling)", r.name)
		return
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	req := probeRequest(r.name, probeToolPrompt)
	req.MaxTokens = 256
	req.Tools = []kairos.ToolSpec{probeTool}
	resp, err := c.client.Chat(cctx, req, nil)
	why := ""
	switch {
	case err == nil && calledProbe(resp.Message.ToolCalls):
		r.tools = kairos.ToolCallingNative
		c.line("tools", r.name, "native: called %s%s", probeTool.Name, argsNote(resp.Message.ToolCalls[0].Arguments))
		return
	case err == nil:
		why = "the model made no native call"
	case kairos.ProviderKind(err) == kairos.ProviderNoTools:
		why = "the server refuses native tools (" + probeErr(err) + ")"
	default:
		c.line("tools", r.name, "FAILED: %s", probeErr(err))
		return
	}
	resp, err = c.client.Chat(cctx, agent.PromptedRequest(req), nil)
	if err != nil {
		c.line("tools", r.name, "none: %s; prompted: FAILED: %s", why, probeErr(err))
		return
	}
	_, calls := agent.ParsePromptedCalls(resp.Message.Content, func(n string) bool { return n == probeTool.Name })
	if !calledProbe(calls) {
		// One probe that got no call is not proof the model cannot call
		// tools: say so, and write no value (a wrong "off" would hide
		// every tool).
		r.uncertain = append(r.uncertain, fmt.Sprintf("tool_calling: uncertain: %s, and no call in a prompted answer either", why))
		c.line("tools", r.name, "uncertain: %s, and no call in a prompted answer either (%q); run the check again, or set models.%s.tool_calling by hand", why, kairos.Clip(resp.Message.Content, 60), r.name)
		return
	}
	r.tools = kairos.ToolCallingPrompted
	c.line("tools", r.name, "prompted: %s; called %s from the prompt%s", why, probeTool.Name, argsNote(calls[0].Arguments))
}

func calledProbe(calls []kairos.ToolCall) bool {
	return len(calls) > 0 && calls[0].Name == probeTool.Name && json.Valid([]byte(calls[0].Arguments))
}

func argsNote(args string) string { return " " + kairos.Clip(args, 60) }

// checkVision sends a small red square and asks its colour.
func (c *modelChecker) checkVision(ctx context.Context, r *modelReport) {
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	req := probeRequest(r.name, "What colour is this image? One word.")
	req.Messages[1].Images = []string{redSquare()}
	resp, err := c.client.Chat(cctx, req, nil)
	no := false
	switch {
	case err != nil && refusesImages(err):
		r.vision = &no
		c.line("vision", r.name, "no: %s", probeErr(err))
		return
	case err != nil:
		c.line("vision", r.name, "FAILED (not known whether it reads images): %s", probeErr(err))
		return
	}
	if !namesRed(resp.Message.Content) {
		// An answer that does not name the colour may come from a model
		// that never saw the image: not proof either way.
		r.uncertain = append(r.uncertain, fmt.Sprintf("vision: uncertain: asked the colour of a red square, it answered %q", kairos.Clip(resp.Message.Content, 40)))
		c.line("vision", r.name, "uncertain: asked the colour of a red square, it answered %q; set models.%s.vision by hand", kairos.Clip(resp.Message.Content, 40), r.name)
		return
	}
	yes := true
	r.vision = &yes
	c.line("vision", r.name, "ok, said %q of a red square", kairos.Clip(resp.Message.Content, 40))
}

// redWords name the probe square's colour (in a few languages: a model
// may answer in the user's).
var redWords = regexp.MustCompile(`(?i)(^|[^\pL])(red|reddish|crimson|scarlet|rouge|rojo|roja|rot|rosso|vermelho|vermelha|rood|czerwony|красный|красного)([^\pL]|$)|红|紅|赤`)

// namesRed reports whether an answer names the colour red.
func namesRed(answer string) bool { return redWords.MatchString(answer) }

func redSquare() string {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 16; x++ {
			img.Set(x, y, color.RGBA{R: 220, A: 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

// checkWindow reports the window the server serves the model with
// (llama-server's n_ctx, Ollama's num_ctx), else the one its model list
// names, else the policy's (and the built-in table's).
func (c *modelChecker) checkWindow(ctx context.Context, r *modelReport) {
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	served := c.client.ServedWindow(cctx, r.name)
	mi, listed := c.listed[r.name]
	spec, known := c.pol.Model(r.name)
	switch {
	case served.Window > 0:
		r.window, r.windowFrom = served.Window, served.Source
	case served.Source == "Ollama":
		c.line("context", r.name, "unknown: Ollama serves it with its default context (OLLAMA_CONTEXT_LENGTH or num_ctx; trained for %d tokens) and cuts longer prompts silently; set models.%s.context_window to what it runs with", served.Trained, r.name)
		return
	case listed && mi.ContextWindow > 0:
		r.window, r.windowFrom = mi.ContextWindow, "the server's model list"
	case known && spec.ContextWindow > 0:
		r.window, r.windowFrom = spec.ContextWindow, "the policy or the built-in table; the server does not say"
	}
	if r.window == 0 {
		c.line("context", r.name, "unknown: the server does not say; set models.%s.context_window", r.name)
		return
	}
	c.line("context", r.name, "%d tokens (from %s)", r.window, r.windowFrom)
}

func (c *modelChecker) checkEmbeddings(ctx context.Context) {
	name := c.m.Config.EmbeddingModel
	if name == "" {
		c.line("embeddings", "-", "not configured (KAIROS_EMBEDDING_MODEL; memory search uses full-text search only)")
		return
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	vecs, err := c.client.Embed(cctx, []string{"kairos model check"})
	if err != nil {
		c.line("embeddings", name, "FAILED: %s", probeErr(err))
		return
	}
	c.line("embeddings", name, "ok, %d dimensions", len(vecs[0]))
}

func (c *modelChecker) checkTranscription(ctx context.Context) {
	name := c.m.Config.TranscribeModel
	if name == "" {
		name = openai.DefaultTranscribeModel
	}
	where := ""
	if c.m.Config.TranscribeURL != "" {
		where = " at " + c.m.Config.TranscribeURL
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	audio := c.client.Audio(openai.AudioConfig{BaseURL: c.m.Config.TranscribeURL, TranscribeModel: name})
	text, err := audio.Transcribe(cctx, "check.wav", bytes.NewReader(silentWAV()))
	if err != nil {
		c.line("transcription", name, "FAILED%s: %s (voice notes will not be understood)", where, probeErr(err))
		return
	}
	c.line("transcription", name, "ok%s, heard %q in half a second of silence", where, kairos.Clip(text, 40))
}

// silentWAV is half a second of 16 kHz mono 16-bit silence.
func silentWAV() []byte {
	const rate, samples = 16000, 8000
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + samples*2))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(1))
	w(uint32(rate))
	w(uint32(rate * 2))
	w(uint16(2))
	w(uint16(16))
	b.WriteString("data")
	w(uint32(samples * 2))
	b.Write(make([]byte, samples*2))
	return b.Bytes()
}

// writeModelsSection prints what the probes found as the policy's
// models: section.
func writeModelsSection(out io.Writer, reports []*modelReport) {
	fmt.Fprintln(out, "# Written by kairos model check; paste into the policy file.")
	fmt.Fprintln(out, "models:")
	for _, r := range reports {
		var fields []string
		if r.window > 0 {
			fields = append(fields, fmt.Sprintf("context_window: %d", r.window))
		}
		if r.tools != "" {
			fields = append(fields, "tool_calling: "+r.tools)
		}
		if r.vision != nil {
			fields = append(fields, fmt.Sprintf("vision: %v", *r.vision))
		}
		if r.thinking != "" {
			fields = append(fields, "thinking: "+r.thinking)
		}
		if len(fields) == 0 {
			fmt.Fprintf(out, "  %s: {}\n", strconv.Quote(r.name))
		} else {
			fmt.Fprintf(out, "  %s:\n", strconv.Quote(r.name))
		}
		for _, f := range fields {
			fmt.Fprintf(out, "    %s\n", f)
		}
		for _, u := range r.uncertain { // a comment: no value is guessed
			fmt.Fprintf(out, "    # %s\n", strings.ReplaceAll(u, "\n", " "))
		}
	}
}

// probeErr says what went wrong in one line, without the key or URLs
// (ProviderError messages are already cleaned).
func probeErr(err error) string {
	var pe *kairos.ProviderError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return kairos.ErrorMessage(err)
}

// refusesImages tells a refusal of the image from a failure of the call:
// a 4xx that is not a rate limit, or any answer that speaks of images
// (llama-server without a projector answers 500).
func refusesImages(err error) bool {
	var pe *kairos.ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	low := strings.ToLower(pe.Message)
	for _, w := range []string{"image", "vision", "multimodal", "mmproj", "image_url"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return pe.StatusCode >= 400 && pe.StatusCode < 500 && pe.StatusCode != 429 && pe.StatusCode != 408
}
