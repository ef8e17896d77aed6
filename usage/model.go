package usage

import (
	"context"

	"github.com/kairos-agent/kairos"
)

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
	release, err := m.Guard.Begin(ctx, sc)
	if err != nil {
		return nil, err
	}
	defer release()
	resp, err := m.Next.Chat(ctx, req, onDelta)
	if err != nil {
		return nil, err
	}
	model := req.Model
	if model == "" {
		model = resp.Model
	}
	rec := &kairos.UsageRecord{Model: model, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		CachedTokens: resp.Usage.CachedTokens, Images: images(req), Estimated: resp.Usage.Estimated}
	if err := m.Guard.Record(ctx, rec); err != nil {
		m.Guard.log.Warn("record usage", "model", model, "err", err)
	}
	return resp, nil
}

// images counts the images a request sends (each call resends them).
func images(req kairos.ChatRequest) int {
	n := 0
	for _, msg := range req.Messages {
		n += len(msg.Images)
	}
	return n
}

// Sessions is a session store whose RecordUsage goes through the Guard
// (priced, cached, counted): the transcription's usage takes this way.
type Sessions struct {
	kairos.SessionStore
	Guard *Guard
}

// RecordUsage implements kairos.SessionStore.
func (s Sessions) RecordUsage(ctx context.Context, rec *kairos.UsageRecord) error {
	if rec.Kind == "" && rec.Audio > 0 {
		rec.Kind = kairos.SpendTranscription
	}
	return s.Guard.Record(ctx, rec)
}
