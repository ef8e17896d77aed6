package web

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// approvalJSON is an approval request as the API shows it (never its
// paused turn).
type approvalJSON struct {
	ID        string    `json:"id"`
	UserID    int64     `json:"user_id"`
	Thread    string    `json:"thread"`
	Action    string    `json:"action"`
	Text      string    `json:"text"`
	Status    string    `json:"status"`
	DecidedBy string    `json:"decided_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func approvalsJSON(as []*kairos.PendingApproval) []approvalJSON {
	out := make([]approvalJSON, len(as))
	for i, a := range as {
		out[i] = approvalJSON{ID: a.ID, UserID: a.UserID, Thread: a.ThreadKey, Action: a.Action, Text: a.Text,
			Status: a.Status, DecidedBy: a.DecidedBy, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt}
	}
	return out
}

var approvalStatuses = map[string]bool{"": true, kairos.ApprovalPending: true, kairos.DecisionApproved: true,
	kairos.DecisionDenied: true, kairos.DecisionExpired: true}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	status := r.URL.Query().Get("status")
	if !approvalStatuses[status] {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, "status must be pending, approved, denied or expired."))
		return
	}
	items, next, err := s.cfg.Backend.Approvals(r.Context(), status, p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writePage(w, approvalsJSON(items), next)
}

type decisionIn struct {
	Approve *bool `json:"approve"`
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	var in decisionIn
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	if in.Approve == nil {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, `The body needs "approve": true or false.`))
		return
	}
	said, err := s.cfg.Backend.DecideApproval(r.Context(), r.PathValue("id"), *in.Approve, actorOf(r.Context()))
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": said})
}

func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	uid, err := userID(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	since := s.cfg.Now().AddDate(0, 0, -30)
	if v := r.URL.Query().Get("since"); v != "" {
		if since, err = time.Parse(time.DateOnly, v); err != nil {
			s.writeError(w, kairos.Errorf(kairos.EINVALID, "since must be a date: YYYY-MM-DD."))
			return
		}
	}
	u, err := s.cfg.Backend.Usage(r.Context(), uid, since)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": u})
}

func (s *Server) skills(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Backend.Skills(r.Context())
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": v})
}

func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Backend.Tools(r.Context())
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) {
	text, pol := s.cfg.Backend.PolicyText()
	writeJSON(w, http.StatusOK, map[string]any{"text": text, "policy": pol})
}

// readText reads a policy body (YAML as text/plain or application/yaml)
// of at most 256 KiB.
func readText(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 256<<10))
	if err != nil {
		return nil, kairos.Errorf(kairos.EINVALID, "The policy text is over 256 KiB.")
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "The body is empty; send the policy's YAML.")
	}
	return b, nil
}

type policyCheck struct {
	Valid    bool            `json:"valid"`
	Problems []PolicyProblem `json:"problems"`
}

func (s *Server) checkPolicy(w http.ResponseWriter, r *http.Request) {
	text, err := readText(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	probs := s.cfg.Backend.CheckPolicy(text)
	writeJSON(w, http.StatusOK, policyCheck{Valid: len(probs) == 0, Problems: nonNil(probs)})
}

func (s *Server) replacePolicy(w http.ResponseWriter, r *http.Request) {
	text, err := readText(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	probs, err := s.cfg.Backend.ReplacePolicy(r.Context(), text)
	if err != nil {
		s.writeError(w, err)
		return
	}
	status := http.StatusOK
	if len(probs) > 0 {
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, policyCheck{Valid: len(probs) == 0, Problems: nonNil(probs)})
}

func nonNil(p []PolicyProblem) []PolicyProblem {
	if p == nil {
		return []PolicyProblem{}
	}
	return p
}

type messageIn struct {
	UserID  int64  `json:"user_id"`
	Text    string `json:"text"`
	Deliver *bool  `json:"deliver,omitempty"`
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var in messageIn
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	if in.UserID <= 0 || strings.TrimSpace(in.Text) == "" {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, `The body needs "user_id" (a Telegram user id) and "text".`))
		return
	}
	if len(in.Text) > kairos.MaxInboundText {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, "The text is over %d bytes.", kairos.MaxInboundText))
		return
	}
	deliver := in.Deliver == nil || *in.Deliver
	answer, err := s.cfg.Backend.RunTurn(r.Context(), in.UserID, in.Text, deliver)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answer": answer, "delivered": deliver})
}

// skillID reads a skill's numeric id from the path.
func skillID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, kairos.Errorf(kairos.EINVALID, "A skill's id is a number (GET /api/v1/skills lists them).")
	}
	return id, nil
}

func (s *Server) skill(w http.ResponseWriter, r *http.Request) {
	id, err := skillID(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	v, err := s.cfg.Backend.Skill(r.Context(), id)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

type skillActionIn struct {
	Action string `json:"action"`
	To     int    `json:"to,omitempty"`
}

var skillActions = map[string]bool{"disable": true, "enable": true, "share": true, "unshare": true, "rollback": true}

func (s *Server) skillAction(w http.ResponseWriter, r *http.Request) {
	id, err := skillID(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var in skillActionIn
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	if !skillActions[in.Action] {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, "action must be disable, enable, share, unshare or rollback."))
		return
	}
	said, err := s.cfg.Backend.SkillAction(r.Context(), id, in.Action, in.To)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": said})
}
