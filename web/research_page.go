package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/kairos-agent/kairos"
)

// researchRow is one research trace as the console lists it: what was
// asked, by whom, how it ended and what it rests on.
type researchRow struct {
	*kairos.ResearchTrace
	Answer     string
	Confidence string
	Reason     string
	Abstained  bool
	Sources    int
	Tiers      string
	Stopped    string
}

// researchAnswer is the part of a stored answer the console shows.
type researchAnswer struct {
	Answer           string            `json:"answer"`
	Abstained        bool              `json:"abstained"`
	Confidence       string            `json:"confidence"`
	ConfidenceReason string            `json:"confidence_reason"`
	Sources          []json.RawMessage `json:"sources"`
	TiersUsed        []string          `json:"tiers_used"`
	Stopped          string            `json:"stopped"`
}

// researchPage lists the research traces, newest first.
func (s *Server) researchPage(w http.ResponseWriter, r *http.Request, sess *session) {
	items, next, err := s.cfg.Backend.ResearchTraces(r.Context(), r.URL.Query().Get("user"), kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 50})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	rows := make([]researchRow, len(items))
	var people []string
	for i, t := range items {
		rows[i] = researchRow{ResearchTrace: t}
		var a researchAnswer
		if json.Unmarshal(t.Answer, &a) == nil {
			rows[i].Answer, rows[i].Confidence, rows[i].Reason = a.Answer, a.Confidence, a.ConfidenceReason
			rows[i].Abstained, rows[i].Sources, rows[i].Stopped = a.Abstained, len(a.Sources), a.Stopped
			rows[i].Tiers = strings.Join(a.TiersUsed, ", ")
		}
		people = append(people, t.UserKey)
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "research", data: obj{"Rows": rows, "Next": next}, people: people})
}
