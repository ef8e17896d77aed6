package usage

import (
	"context"
	"io"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/fit"
)

// The model users' doors through the guard: every chat call, embedding
// and spoken answer is admitted (or refused) before it is made and
// recorded after it; transcriptions take Guard.Begin themselves (media),
// since only the file says what they will use. A user's SpendContext
// comes from the call's context.

// Model is a kairos.Model whose every call is checked against the caps
// before it is made and priced and recorded after it answered.
type Model struct {
	Next  kairos.Model
	Guard *Guard
}

var _ kairos.Model = (*Model)(nil)

// Chat implements kairos.Model. A refused call returns a
// *kairos.SpendRefusal and makes no request.
func (m *Model) Chat(ctx context.Context, req kairos.ChatRequest, onDelta func(string)) (*kairos.ChatResponse, error) {
	sc, _ := kairos.SpendOf(ctx)
	done, err := m.Guard.Begin(ctx, sc, chatEstimate(req))
	if err != nil {
		return nil, err
	}
	resp, err := m.Next.Chat(ctx, req, onDelta)
	if err != nil {
		done(ctx, nil)
		return nil, err
	}
	model := req.Model
	if model == "" {
		model = resp.Model
	}
	done(ctx, &kairos.UsageRecord{Model: model, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		CachedTokens: resp.Usage.CachedTokens, Images: images(req), Estimated: resp.Usage.Estimated})
	return resp, nil
}

// chatEstimate is what a chat request is expected to use: its texts and
// tool schemas as prompt tokens, its answer's room (MaxTokens, else a
// short answer) as completion tokens.
func chatEstimate(req kairos.ChatRequest) kairos.UsageRecord {
	prompt := 0
	for _, msg := range req.Messages {
		prompt += fit.Estimate(msg.Content) + 4
		for _, tc := range msg.ToolCalls {
			prompt += fit.Estimate(tc.Name) + fit.Estimate(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		prompt += fit.Estimate(t.Name) + fit.Estimate(t.Description) + fit.Estimate(string(t.Parameters))
	}
	completion := req.MaxTokens
	if completion <= 0 {
		completion = defaultAnswerTokens
	}
	return kairos.UsageRecord{Model: req.Model, PromptTokens: prompt, CompletionTokens: completion, Images: images(req), Estimated: true}
}

// defaultAnswerTokens is the answer a request without MaxTokens is
// expected to write (what its slot of the caps holds until it settles).
const defaultAnswerTokens = 512

// images counts the images a request sends (each call resends them).
func images(req kairos.ChatRequest) int {
	n := 0
	for _, msg := range req.Messages {
		n += len(msg.Images)
	}
	return n
}

// Embedder is a kairos.Embedder through the guard. The endpoint reports
// no usage to Kairos, so the tokens are estimated from the texts.
type Embedder struct {
	Next kairos.Embedder
	// Model names the embedding model (its price, the usage rows).
	Model string
	Guard *Guard
}

var _ kairos.Embedder = (*Embedder)(nil)

// Embed implements kairos.Embedder. A refused call returns a
// *kairos.SpendRefusal and makes no request.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	tokens := 0
	for _, t := range texts {
		tokens += fit.Estimate(t)
	}
	est := kairos.UsageRecord{Model: e.Model, PromptTokens: tokens, Estimated: true}
	return guarded(ctx, e.Guard, est, func() ([][]float32, error) { return e.Next.Embed(ctx, texts) })
}

// Speaker is a kairos.Speaker through the guard: a spoken answer counts
// its text as tokens of the speech model.
type Speaker struct {
	Next kairos.Speaker
	// Model names the speech model (its price, the usage rows).
	Model string
	Guard *Guard
}

var _ kairos.Speaker = (*Speaker)(nil)

// Speak implements kairos.Speaker. A refused call returns a
// *kairos.SpendRefusal and makes no request.
func (s *Speaker) Speak(ctx context.Context, text string) (io.ReadCloser, error) {
	est := kairos.UsageRecord{Model: s.Model, PromptTokens: fit.Estimate(text), Estimated: true}
	return guarded(ctx, s.Guard, est, func() (io.ReadCloser, error) { return s.Next.Speak(ctx, text) })
}

// guarded makes one call whose use is est (the endpoint reports none)
// through g for the SpendContext of ctx: admitted first, recorded once
// it succeeded.
func guarded[T any](ctx context.Context, g *Guard, est kairos.UsageRecord, call func() (T, error)) (T, error) {
	sc, _ := kairos.SpendOf(ctx)
	done, err := g.Begin(ctx, sc, est)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := call()
	if err != nil {
		done(ctx, nil)
		return out, err
	}
	done(ctx, &est)
	return out, nil
}
