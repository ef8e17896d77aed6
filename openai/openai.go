package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/kairos-agent/kairos"
)

// Defaults used when Config leaves a field empty.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultTimeout        = 2 * time.Minute
	embedBatch            = 256
)

// Config configures a Client.
type Config struct {
	BaseURL        string        // OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 (default)
	APIKey         string        // sent as "Authorization: Bearer …"; may be empty for local servers
	HTTPClient     *http.Client  // default: a plain http.Client (deadlines come from the context)
	Timeout        time.Duration // limit on one call, streaming included; DefaultTimeout when 0, none when < 0
	EmbeddingModel string        // model for Embed; DefaultEmbeddingModel when empty
	// EmbeddingDimensions, when positive, asks the embeddings endpoint
	// for vectors of this size (the `dimensions` parameter; OpenAI's
	// text-embedding-3 models shorten their vectors on request). 0 keeps
	// the model's own size.
	EmbeddingDimensions int
	Logger              *slog.Logger // default: discard
}

// Client talks to an OpenAI-compatible API. It implements kairos.Model and
// kairos.Embedder and is safe for concurrent use.
type Client struct {
	api     *goopenai.Client
	doer    capturingDoer
	apiKey  string
	host    string
	timeout time.Duration
	embed   string
	dims    int
	log     *slog.Logger
	now     func() time.Time
}

var (
	_ kairos.Model    = (*Client)(nil)
	_ kairos.Embedder = (*Client)(nil)
)

// New returns a Client for cfg.
func New(cfg Config) *Client {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	oc := goopenai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = base
	oc.HTTPClient = capturingDoer{hc}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	model := cfg.EmbeddingModel
	if model == "" {
		model = DefaultEmbeddingModel
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		api:     goopenai.NewClientWithConfig(oc),
		doer:    capturingDoer{hc},
		apiKey:  cfg.APIKey,
		host:    hostOf(base),
		timeout: timeout,
		embed:   model,
		dims:    max(cfg.EmbeddingDimensions, 0),
		log:     log.With("component", "openai"),
		now:     time.Now,
	}
}

// captureKey keys the *capture a call puts in its request context so that
// the transport can record the answer's status and headers (go-openai
// drops the headers of error answers, and Retry-After lives there).
type captureKey struct{}

type capture struct {
	status int
	header http.Header
}

type capturingDoer struct{ c *http.Client }

func (d capturingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if cp, ok := req.Context().Value(captureKey{}).(*capture); ok && resp != nil {
		cp.status = resp.StatusCode
		cp.header = resp.Header.Clone()
	}
	return resp, err
}

// call prepares the context of one API call: the timeout and the capture.
func (c *Client) call(ctx context.Context) (context.Context, context.CancelFunc, *capture) {
	cp := &capture{}
	var cancel context.CancelFunc = func() {}
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	return context.WithValue(ctx, captureKey{}, cp), cancel, cp
}

// usesMaxCompletionTokens reports whether model rejects max_tokens (the
// OpenAI reasoning families); other servers get the widely supported
// max_tokens.
func usesMaxCompletionTokens(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func toRequest(req kairos.ChatRequest) goopenai.ChatCompletionRequest {
	out := goopenai.ChatCompletionRequest{Model: req.Model}
	for _, m := range req.Messages {
		om := goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		if len(m.Images) > 0 {
			// A vision turn: the text, then each image as an image_url part.
			om.Content = ""
			om.MultiContent = append(om.MultiContent, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: m.Content})
			for _, u := range m.Images {
				om.MultiContent = append(om.MultiContent, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL,
					ImageURL: &goopenai.ChatMessageImageURL{URL: u, Detail: goopenai.ImageURLDetailAuto}})
			}
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, goopenai.ToolCall{
				ID: tc.ID, Type: goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = []byte(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	if req.MaxTokens > 0 {
		if usesMaxCompletionTokens(req.Model) {
			out.MaxCompletionTokens = req.MaxTokens
		} else {
			out.MaxTokens = req.MaxTokens
		}
	}
	return out
}

// Chat sends req. With onDelta the answer is streamed (with
// stream_options.include_usage) and onDelta receives the accumulated text
// each time it grows; tool calls are assembled from their streamed
// fragments by index. Failures are *kairos.ProviderError, except that a
// cancelled or expired ctx of the caller is returned as ctx.Err() wrapped.
func (c *Client) Chat(ctx context.Context, req kairos.ChatRequest, onDelta func(text string)) (*kairos.ChatResponse, error) {
	start := c.now()
	cctx, cancel, cp := c.call(ctx)
	defer cancel()
	oreq := toRequest(req)
	var (
		resp *kairos.ChatResponse
		err  error
	)
	if onDelta == nil {
		resp, err = c.chatOnce(cctx, oreq)
	} else {
		resp, err = c.chatStream(cctx, oreq, onDelta)
	}
	op := "chat " + req.Model
	if err != nil {
		err = c.classify(ctx, cctx, op, cp, err)
		c.logFailure(op, err)
		return nil, err
	}
	c.log.Debug("chat", "model", resp.Model, "stream", onDelta != nil, "duration", c.now().Sub(start),
		"prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens,
		"finish_reason", resp.FinishReason, "tool_calls", len(resp.Message.ToolCalls))
	return resp, nil
}

func (c *Client) chatOnce(ctx context.Context, oreq goopenai.ChatCompletionRequest) (*kairos.ChatResponse, error) {
	r, err := c.api.CreateChatCompletion(ctx, oreq)
	if err != nil {
		return nil, err
	}
	if len(r.Choices) == 0 {
		return nil, &kairos.ProviderError{StatusCode: 200, Retryable: true, Message: "answer had no choices"}
	}
	ch := r.Choices[0]
	msg := kairos.ChatMessage{Role: "assistant", Content: ch.Message.Content}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, kairos.ToolCall{ID: id, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	model := r.Model
	if model == "" {
		model = oreq.Model
	}
	return &kairos.ChatResponse{
		Model: model, Message: msg, FinishReason: string(ch.FinishReason),
		Usage: kairos.Usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens},
	}, nil
}

type partialCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

func (c *Client) chatStream(ctx context.Context, oreq goopenai.ChatCompletionRequest, onDelta func(string)) (*kairos.ChatResponse, error) {
	oreq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	stream, err := c.api.CreateChatCompletionStream(ctx, oreq)
	if err != nil {
		return nil, err
	}
	defer stream.Close()

	var (
		text   strings.Builder
		calls  []*partialCall
		byIdx  = map[int]*partialCall{}
		usage  kairos.Usage
		finish string
		model  = oreq.Model
	)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if chunk.Model != "" {
			model = chunk.Model
		}
		if chunk.Usage != nil {
			usage = kairos.Usage{PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			if d.Content != "" {
				text.WriteString(d.Content)
				onDelta(text.String())
			}
			for _, tc := range d.ToolCalls {
				idx := streamIndex(tc, calls)
				p := byIdx[idx]
				if p == nil {
					p = &partialCall{index: idx}
					byIdx[idx] = p
					calls = append(calls, p)
				}
				if tc.ID != "" {
					p.id = tc.ID
				}
				if n := tc.Function.Name; n != "" && n != p.name {
					p.name += n
				}
				p.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finish = string(choice.FinishReason)
			}
		}
	}
	if finish == "" {
		return nil, &kairos.ProviderError{StatusCode: 200, Retryable: true, Message: "stream ended before the model finished"}
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	msg := kairos.ChatMessage{Role: "assistant", Content: text.String()}
	for i, p := range calls {
		id := p.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, kairos.ToolCall{ID: id, Name: p.name, Arguments: p.args.String()})
	}
	return &kairos.ChatResponse{Model: model, Message: msg, FinishReason: finish, Usage: usage}, nil
}

// streamIndex finds which call a streamed tool-call fragment belongs to:
// its index when the server sends one, otherwise a new call when it
// carries a new id, else the last call.
func streamIndex(tc goopenai.ToolCall, calls []*partialCall) int {
	if tc.Index != nil {
		return *tc.Index
	}
	if len(calls) == 0 {
		return 0
	}
	last := calls[len(calls)-1]
	if tc.ID != "" && last.id != "" && tc.ID != last.id {
		return last.index + 1
	}
	return last.index
}

// Embed returns one vector per text, in order, using the configured
// embedding model; texts are sent in batches of 256. An empty text is an
// EINVALID error (the API rejects it).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, kairos.Errorf(kairos.EINVALID, "text %d to embed is empty", i)
		}
	}
	out := make([][]float32, len(texts))
	op := "embeddings " + c.embed
	for start := 0; start < len(texts); start += embedBatch {
		end := min(start+embedBatch, len(texts))
		batch := texts[start:end]
		cctx, cancel, cp := c.call(ctx)
		resp, err := c.api.CreateEmbeddings(cctx, goopenai.EmbeddingRequestStrings{Input: batch, Model: goopenai.EmbeddingModel(c.embed), Dimensions: c.dims})
		if err != nil {
			err = c.classify(ctx, cctx, op, cp, err)
			cancel()
			c.logFailure(op, err)
			return nil, err
		}
		cancel()
		if len(resp.Data) != len(batch) {
			return nil, &kairos.ProviderError{StatusCode: 200, Message: fmt.Sprintf("%s: answer has %d vectors for %d texts", op, len(resp.Data), len(batch))}
		}
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(batch) || out[start+d.Index] != nil {
				return nil, &kairos.ProviderError{StatusCode: 200, Message: fmt.Sprintf("%s: answer has a bad vector index %d", op, d.Index)}
			}
			out[start+d.Index] = d.Embedding
		}
	}
	return out, nil
}

// Ping checks that the endpoint answers and accepts the key (GET /models);
// /readyz uses it. Failures are *kairos.ProviderError.
func (c *Client) Ping(ctx context.Context) error {
	cctx, cancel, cp := c.call(ctx)
	defer cancel()
	if _, err := c.api.ListModels(cctx); err != nil {
		err = c.classify(ctx, cctx, "list models", cp, err)
		c.logFailure("list models", err)
		return err
	}
	return nil
}

func (c *Client) logFailure(op string, err error) {
	var pe *kairos.ProviderError
	if errors.As(err, &pe) {
		c.log.Warn("model provider call failed", "op", op, "status", pe.StatusCode, "retryable", pe.Retryable,
			"retry_after", pe.RetryAfter, "error", pe.Message)
		return
	}
	c.log.Debug("model provider call ended", "op", op, "error", err)
}
