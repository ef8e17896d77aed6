package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"

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
