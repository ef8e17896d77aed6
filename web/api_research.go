package web

import (
	"encoding/json"
	"net/http"
	"time"
)

// researchJSON is a research trace as the API shows it.
type researchJSON struct {
	ID        string          `json:"id"`
	User      string          `json:"user"`
	Thread    string          `json:"thread,omitempty"`
	Question  string          `json:"question"`
	Depth     string          `json:"depth"`
	Status    string          `json:"status"`
	Tainted   bool            `json:"tainted"`
	Answer    json.RawMessage `json:"answer,omitempty"`
	State     json.RawMessage `json:"state,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

func (s *Server) listResearch(w http.ResponseWriter, r *http.Request) {
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	items, next, err := s.cfg.Backend.ResearchTraces(r.Context(), r.URL.Query().Get("user"), p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	out := make([]researchJSON, len(items))
	for i, t := range items {
		out[i] = researchJSON{ID: t.ID, User: t.UserKey, Thread: t.ThreadKey, Question: t.Question, Depth: t.Depth, Status: t.Status,
			Tainted: t.Tainted, Answer: validJSON(t.Answer), State: validJSON(t.State), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	}
	writePage(w, out, next)
}

// validJSON keeps a stored JSON text, or nothing when it is not one.
func validJSON(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}
