package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
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
	// CountTokens counts the tokens of a text for model, used to estimate
	// usage when a server reports none; nil: fit.Estimate.
	CountTokens func(model, text string) int
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
	count   func(model, text string) int
	base    string
	quirks  quirkMemory // what each model refused, learned per process
	// pingDown: the last Ping failed. A readiness probe pings every few
	// seconds; a failure is logged when it begins, a recovery when it ends.
	pingDown atomic.Bool
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
	count := cfg.CountTokens
	if count == nil {
		count = func(_, text string) int { return fit.Estimate(text) }
	}
	return &Client{
		count:   count,
		base:    base,
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
	body   []byte // the start of an error answer (servers put details beside the message)
}

type capturingDoer struct{ c *http.Client }

func (d capturingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err == nil {
		normalizeResponse(req, resp)
	}
	if cp, ok := req.Context().Value(captureKey{}).(*capture); ok && resp != nil {
		cp.status = resp.StatusCode
		cp.header = resp.Header.Clone()
		if resp.StatusCode >= 400 && resp.Body != nil {
			head, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
			cp.body = head
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		}
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

func toRequest(req kairos.ChatRequest, q modelQuirks) goopenai.ChatCompletionRequest {
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
		if q.maxCompletion > 0 || q.maxCompletion == 0 && usesMaxCompletionTokens(req.Model) {
			out.MaxCompletionTokens = req.MaxTokens
		} else {
			out.MaxTokens = req.MaxTokens
		}
	}
	return out
}

// Chat sends req. With onDelta the answer is streamed (with
// stream_options.include_usage) and onDelta receives the accumulated
// visible text each time it grows; tool calls are assembled from their
// streamed fragments by index. Thinking (<think> blocks and
// reasoning_content) is kept out of the answer and counted in
// Usage.ReasoningTokens. A 400 naming a parameter the model refuses
// (max_tokens, max_completion_tokens, stream_options) is retried once
// without it, and the model is remembered. Failures are
// *kairos.ProviderError (Kind says when the context was too long or tools
// were refused), except that a cancelled or expired ctx of the caller is
// returned as ctx.Err() wrapped.
func (c *Client) Chat(ctx context.Context, req kairos.ChatRequest, onDelta func(text string)) (*kairos.ChatResponse, error) {
	start := c.now()
	op := "chat " + req.Model
	var (
		resp *kairos.ChatResponse
		err  error
	)
	for attempt := 0; attempt < 2; attempt++ {
		resp, err = c.chatAttempt(ctx, req, onDelta)
		if err == nil || ctx.Err() != nil {
			break
		}
		param := unsupportedParam(err)
		if attempt > 0 || param == "" || !c.quirks.learn(req.Model, param) {
			break
		}
		c.log.Info("model refused a parameter; sending without it from now on", "model", req.Model, "param", param)
	}
	if err != nil {
		c.logFailure(op, err)
		return nil, err
	}
	c.log.Debug("chat", "model", resp.Model, "stream", onDelta != nil, "duration", c.now().Sub(start),
		"prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens,
		"reasoning_tokens", resp.Usage.ReasoningTokens, "estimated", resp.Usage.Estimated,
		"finish_reason", resp.FinishReason, "tool_calls", len(resp.Message.ToolCalls))
	return resp, nil
}

// chatAttempt is one request. Its error keeps go-openai's error inside
// (for unsupportedParam) and is a *kairos.ProviderError on the outside.
func (c *Client) chatAttempt(ctx context.Context, req kairos.ChatRequest, onDelta func(text string)) (*kairos.ChatResponse, error) {
	cctx, cancel, cp := c.call(ctx)
	defer cancel()
	q := c.quirks.get(req.Model)
	oreq := toRequest(req, q)
	var (
		resp *kairos.ChatResponse
		err  error
	)
	thinking := req.Thinking
	if thinking == "" {
		thinking = q.thinking // what its answers showed, in this process
	}
	if onDelta == nil {
		resp, err = c.chatOnce(cctx, oreq, thinking)
	} else {
		resp, err = c.chatStream(cctx, oreq, !q.noStreamOptions, thinking, onDelta)
	}
	if err != nil {
		raw := err
		err = c.classify(ctx, cctx, "chat "+req.Model, cp, err)
		var pe *kairos.ProviderError
		if errors.As(err, &pe) {
			refine(pe, raw, cp.body)
			return nil, &refusalError{pe: pe, raw: raw}
		}
		return nil, err
	}
	c.finishUsage(req, resp)
	return resp, nil
}

// refusalError is a ProviderError that still holds go-openai's error, so
// that Chat can read the refused parameter.
type refusalError struct {
	pe  *kairos.ProviderError
	raw error
}

func (e *refusalError) Error() string { return e.pe.Error() }

func (e *refusalError) As(target any) bool {
	if t, ok := target.(**kairos.ProviderError); ok {
		*t = e.pe
		return true
	}
	return errors.As(e.raw, target)
}

// finishUsage estimates the counts a server did not report.
func (c *Client) finishUsage(req kairos.ChatRequest, resp *kairos.ChatResponse) {
	u := &resp.Usage
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		for _, m := range req.Messages {
			u.PromptTokens += c.count(req.Model, m.Content) + 4
			for _, tc := range m.ToolCalls {
				u.PromptTokens += c.count(req.Model, tc.Name+tc.Arguments)
			}
		}
		for _, t := range req.Tools {
			u.PromptTokens += c.count(req.Model, t.Name+t.Description+string(t.Parameters))
		}
		u.CompletionTokens = c.count(req.Model, resp.Message.Content)
		for _, tc := range resp.Message.ToolCalls {
			u.CompletionTokens += c.count(req.Model, tc.Name+tc.Arguments)
		}
		u.CompletionTokens += u.ReasoningTokens
		u.Estimated = true
	}
}

// answer builds the message of a finished answer: the visible text, the
// thinking apart (where thoughts begin: thinking; how it ended: finish),
// tool calls with ids (some servers send none). It learns from the answer
// where the model's thoughts begin.
func (c *Client) answer(model, content, reasoning, thinking, finish string, calls []kairos.ToolCall, reported int) (kairos.ChatMessage, int) {
	visible, thought := finalThink(content, thinking, finish)
	c.quirks.learnThinking(model, content, finish)
	if reasoning != "" && thought != "" {
		thought = reasoning + "\n" + thought
	} else if reasoning != "" {
		thought = reasoning
	}
	msg := kairos.ChatMessage{Role: "assistant", Content: visible}
	for _, tc := range calls {
		if tc.ID == "" {
			// Ids key the journal and approvals: unique, not call_0.
			tc.ID = "call_" + kairos.NewID()
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	reasoningTokens := reported
	if reasoningTokens == 0 && thought != "" {
		reasoningTokens = c.count(model, thought)
	}
	return msg, reasoningTokens
}

func (c *Client) chatOnce(ctx context.Context, oreq goopenai.ChatCompletionRequest, thinking string) (*kairos.ChatResponse, error) {
	r, err := c.api.CreateChatCompletion(ctx, oreq)
	if err != nil {
		return nil, err
	}
	if len(r.Choices) == 0 {
		return nil, &kairos.ProviderError{StatusCode: 200, Retryable: true, Message: "answer had no choices"}
	}
	ch := r.Choices[0]
	var calls []kairos.ToolCall
	for _, tc := range ch.Message.ToolCalls {
		calls = append(calls, kairos.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	reported := 0
	if d := r.Usage.CompletionTokensDetails; d != nil {
		reported = d.ReasoningTokens
	}
	msg, reasoning := c.answer(oreq.Model, ch.Message.Content, ch.Message.ReasoningContent, thinking, string(ch.FinishReason), calls, reported)
	model := r.Model
	if model == "" {
		model = oreq.Model
	}
	return &kairos.ChatResponse{
		Model: model, Message: msg, FinishReason: string(ch.FinishReason),
		Usage: kairos.Usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens, ReasoningTokens: reasoning,
			CachedTokens: cachedOf(r.Usage)},
	}, nil
}

type partialCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

// streamState accumulates a streamed answer.
type streamState struct {
	text, reasoning strings.Builder
	calls           []*partialCall
	byIdx           map[int]*partialCall
	usage           *goopenai.Usage
	finish, model   string
	shown           string
	thinking        string // where thoughts begin (streamVisible)
}

func (st *streamState) add(chunk goopenai.ChatCompletionStreamResponse, onDelta func(string)) {
	if chunk.Model != "" {
		st.model = chunk.Model
	}
	if chunk.Usage != nil {
		st.usage = chunk.Usage
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue
		}
		d := choice.Delta
		st.reasoning.WriteString(d.ReasoningContent)
		if d.Content != "" {
			st.text.WriteString(d.Content)
			if v := streamVisible(st.text.String(), st.thinking); v != st.shown && v != "" {
				st.shown = v
				onDelta(v)
			}
		}
		for _, tc := range d.ToolCalls {
			idx := streamIndex(tc, st.calls)
			p := st.byIdx[idx]
			if p == nil {
				p = &partialCall{index: idx}
				st.byIdx[idx] = p
				st.calls = append(st.calls, p)
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
			st.finish = string(choice.FinishReason)
		}
	}
}

func (c *Client) chatStream(ctx context.Context, oreq goopenai.ChatCompletionRequest, includeUsage bool, thinking string, onDelta func(string)) (*kairos.ChatResponse, error) {
	if includeUsage {
		oreq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	stream, err := c.api.CreateChatCompletionStream(ctx, oreq)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	st := &streamState{byIdx: map[int]*partialCall{}, model: oreq.Model, thinking: thinking}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		st.add(chunk, onDelta)
	}
	if st.finish == "" {
		return nil, &kairos.ProviderError{StatusCode: 200, Retryable: true, Message: "stream ended before the model finished"}
	}
	sort.SliceStable(st.calls, func(i, j int) bool { return st.calls[i].index < st.calls[j].index })
	var calls []kairos.ToolCall
	for _, p := range st.calls {
		calls = append(calls, kairos.ToolCall{ID: p.id, Name: p.name, Arguments: p.args.String()})
	}
	var usage kairos.Usage
	reported := 0
	if u := st.usage; u != nil {
		usage = kairos.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: cachedOf(*u)}
		if u.CompletionTokensDetails != nil {
			reported = u.CompletionTokensDetails.ReasoningTokens
		}
	}
	msg, reasoning := c.answer(oreq.Model, st.text.String(), st.reasoning.String(), thinking, st.finish, calls, reported)
	usage.ReasoningTokens = reasoning
	return &kairos.ChatResponse{Model: st.model, Message: msg, FinishReason: st.finish, Usage: usage}, nil
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
// /readyz uses it. Failures are *kairos.ProviderError. A run of failures
// logs one warning, and the recovery one line.
func (c *Client) Ping(ctx context.Context) error {
	cctx, cancel, cp := c.call(ctx)
	defer cancel()
	if _, err := c.api.ListModels(cctx); err != nil {
		err = c.classify(ctx, cctx, "list models", cp, err)
		if c.pingDown.CompareAndSwap(false, true) {
			c.logFailure("list models", err)
		} else {
			c.log.Debug("model provider still failing", "op", "list models", "error", err)
		}
		return err
	}
	if c.pingDown.CompareAndSwap(true, false) {
		c.log.Info("model provider answers again", "op", "list models")
	}
	return nil
}

func (c *Client) logFailure(op string, err error) {
	var pe *kairos.ProviderError
	if errors.As(err, &pe) {
		level := slog.LevelWarn
		if strings.HasPrefix(op, "chat ") {
			level = slog.LevelDebug // the agent logs each chat attempt it makes: one line per failure
		}
		c.log.Log(context.Background(), level, "model provider call failed", "op", op, "status", pe.StatusCode, "retryable", pe.Retryable,
			"retry_after", pe.RetryAfter, "error", pe.Message)
		return
	}
	c.log.Debug("model provider call ended", "op", op, "error", err)
}

// cachedOf is the part of the prompt the provider served from its cache,
// when it reports one.
func cachedOf(u goopenai.Usage) int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return min(u.PromptTokensDetails.CachedTokens, u.PromptTokens)
}
