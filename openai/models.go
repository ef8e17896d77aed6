package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"
)

// ModelInfo is one entry of GET /models with the context window where
// the server says it. OpenAI says nothing; the others name it their own
// way: OpenRouter and LM Studio context_length, Groq context_window, vLLM
// max_model_len, llama.cpp's llama-server meta.n_ctx_train (the trained
// length; the served one is its -c flag), Ollama nothing here.
type ModelInfo struct {
	ID            string
	ContextWindow int
	OwnedBy       string
}

// Models lists the endpoint's models with what they say of themselves.
// Failures are *kairos.ProviderError.
func (c *Client) Models(ctx context.Context) ([]ModelInfo, error) {
	cctx, cancel, cp := c.call(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, c.base+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.doer.Do(req)
	if err != nil {
		return nil, c.classify(ctx, cctx, "list models", cp, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, c.classify(ctx, cctx, "list models", cp, err)
	}
	if resp.StatusCode >= 400 {
		return nil, c.classify(ctx, cctx, "list models", cp, &goopenai.RequestError{HTTPStatus: resp.Status, HTTPStatusCode: resp.StatusCode, Body: body})
	}
	return parseModels(body)
}

func parseModels(body []byte) ([]ModelInfo, error) {
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			OwnedBy       string `json:"owned_by"`
			ContextLength int    `json:"context_length"`
			ContextWindow int    `json:"context_window"`
			MaxModelLen   int    `json:"max_model_len"`
			Meta          *struct {
				NCtxTrain int `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("list models: malformed answer")
	}
	out := make([]ModelInfo, 0, len(list.Data))
	for _, d := range list.Data {
		mi := ModelInfo{ID: d.ID, OwnedBy: d.OwnedBy}
		for _, n := range []int{d.ContextWindow, d.ContextLength, d.MaxModelLen} {
			if n > 0 {
				mi.ContextWindow = n
				break
			}
		}
		if mi.ContextWindow == 0 && d.Meta != nil {
			mi.ContextWindow = d.Meta.NCtxTrain
		}
		out = append(out, mi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Served is what a local server says of the window it runs a model with,
// through its own API beside the OpenAI one.
type Served struct {
	Window  int    // tokens one request may use; 0 when the server does not say
	Trained int    // the model's trained length, when that is all it says
	Source  string // "llama-server /props", "Ollama num_ctx", "Ollama"
}

var numCtxRe = regexp.MustCompile(`(?m)^num_ctx\s+(\d+)`)

// ServedWindow asks llama-server (GET /props: n_ctx per slot) and Ollama
// (POST /api/show: num_ctx, else the trained length) how large a window
// they serve model with. Only for a base URL ending in /v1; any failure
// is a zero Served (the probe is best-effort).
func (c *Client) ServedWindow(ctx context.Context, model string) Served {
	root, ok := strings.CutSuffix(c.base, "/v1")
	if !ok {
		return Served{}
	}
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.getJSON(ctx, http.MethodGet, root+"/props", nil, &props) && props.Settings.NCtx > 0 {
		return Served{Window: props.Settings.NCtx, Source: "llama-server /props"}
	}
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	if !c.getJSON(ctx, http.MethodPost, root+"/api/show", body, &show) {
		return Served{}
	}
	if m := numCtxRe.FindStringSubmatch(show.Parameters); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Served{Window: n, Source: "Ollama num_ctx"}
	}
	s := Served{Source: "Ollama"}
	for k, v := range show.ModelInfo {
		if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") {
			s.Trained = int(n)
		}
	}
	return s
}

func (c *Client) getJSON(ctx context.Context, method, url string, body []byte, out any) bool {
	cctx, cancel, _ := c.call(ctx)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, method, url, rd)
	if err != nil {
		return false
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.doer.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(out) == nil
}
