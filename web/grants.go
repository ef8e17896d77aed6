package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// grantJSON is a standing approval as the API shows it.
type grantJSON struct {
	ID          string     `json:"id"`
	User        string     `json:"user"`
	Thread      string     `json:"thread"`
	Tool        string     `json:"tool"`
	Action      string     `json:"action,omitempty"`
	Target      string     `json:"target"`
	Label       string     `json:"label,omitempty"`
	CoversTasks bool       `json:"covers_tasks"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	CreatedBy   string     `json:"created_by,omitempty"`
	LastUsedAt  *time.Time `json:"last_used_at,omitempty"`
	Uses        int64      `json:"uses"`
}

func grantsJSON(gs []*kairos.Grant) []grantJSON {
	out := make([]grantJSON, len(gs))
	for i, g := range gs {
		out[i] = grantJSON{ID: g.ID, User: g.UserKey, Thread: g.ThreadKey, Tool: g.Tool, Action: g.Action, Target: g.Target,
			Label: g.Label, CoversTasks: g.CoversTasks, CreatedAt: g.CreatedAt, CreatedBy: g.CreatedBy, Uses: g.Uses}
		if !g.ExpiresAt.IsZero() {
			out[i].ExpiresAt = &g.ExpiresAt
		}
		if !g.LastUsedAt.IsZero() {
			out[i].LastUsedAt = &g.LastUsedAt
		}
	}
	return out
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request) {
	user := r.URL.Query().Get("user")
	if user != "" && !strings.Contains(user, ":") {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, "user is a user key such as telegram:42."))
		return
	}
	gs, err := s.cfg.Backend.Grants(r.Context(), user)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": grantsJSON(gs)})
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Backend.RevokeGrant(r.Context(), r.PathValue("id"), actorOf(r.Context())); err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// grantCard is a grant as the console's page shows it (zero times: none).
type grantCard struct {
	grantJSON
	Until, Last time.Time
}

func (s *Server) grantsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	gs, err := s.cfg.Backend.Grants(r.Context(), "")
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	cards := make([]grantCard, len(gs))
	var people []string
	for i, g := range gs {
		cards[i] = grantCard{grantJSON: grantsJSON(gs[i : i+1])[0], Until: g.ExpiresAt, Last: g.LastUsedAt}
		people = append(people, g.UserKey)
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "grants", data: map[string]any{"Grants": cards}, people: people})
}

func (s *Server) revokeGrantPost(w http.ResponseWriter, r *http.Request, sess *session) {
	err := s.cfg.Backend.RevokeGrant(r.Context(), r.PostFormValue("id"), fmt.Sprintf("console:%d", sess.UserID))
	s.recordConsoleWrite(r, sess, statusFor(err))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	back(w, r, "/console/grants", "Revoked: the next such call asks again.")
}
