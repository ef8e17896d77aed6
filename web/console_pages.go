package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kairos-agent/kairos"
)

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request, sess *session) {
	o, err := s.cfg.Backend.Overview(r.Context())
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	turns, lat := make([]float64, len(o.TurnsPerMinute)), o.ModelLatencyMS
	total := 0
	for i, v := range o.TurnsPerMinute {
		turns[i] = float64(v)
		total += v
	}
	ago := func(n int) func(i int) string {
		return func(i int) string { return fmt.Sprintf("%d min ago", n-1-i) }
	}
	s.render(w, r, http.StatusOK, "overview", sess, map[string]any{"O": o, "Turns": total,
		"TurnsChart": barChart(turns, ago(len(turns))), "LatencyChart": barChart(lat, ago(len(lat)))})
}

func (s *Server) usersPage(w http.ResponseWriter, r *http.Request, sess *session) {
	users, next, err := s.cfg.Backend.Users(r.Context(), kairos.Page{Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "users", sess, map[string]any{"Users": users, "Next": next})
}

func (s *Server) threadsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	user := r.URL.Query().Get("user")
	threads, _, err := s.cfg.Backend.Threads(r.Context(), user, kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 200})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "threads", sess, map[string]any{"Threads": threads, "User": user})
}

func (s *Server) threadPage(w http.ResponseWriter, r *http.Request, sess *session) {
	key := r.URL.Query().Get("key")
	t, err := s.cfg.Backend.Thread(r.Context(), key)
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	msgs, next, err := s.cfg.Backend.ThreadMessages(r.Context(), key, kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 100})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "thread", sess, map[string]any{"Thread": t, "Messages": msgs, "Next": next})
}

func (s *Server) memoriesPage(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	user, text := q.Get("user"), strings.TrimSpace(q.Get("q"))
	var ms []*kairos.Memory
	next, err := "", error(nil)
	if text != "" && user != "" {
		ms, err = s.cfg.Backend.SearchMemories(r.Context(), user, text, 50)
	} else {
		ms, next, err = s.cfg.Backend.Memories(r.Context(), user, kairos.Page{Cursor: q.Get("cursor")})
	}
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "memories", sess, map[string]any{"Memories": memoriesJSON(ms), "Next": next, "User": user, "Q": text})
}

func (s *Server) forgetPost(w http.ResponseWriter, r *http.Request, sess *session) {
	err := s.cfg.Backend.ForgetMemory(r.Context(), r.PostFormValue("user"), r.PostFormValue("id"))
	s.recordConsoleWrite(r, sess, statusFor(err))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	back(w, r, "/console/memories", "Forgotten.")
}

func (s *Server) schedulesPage(w http.ResponseWriter, r *http.Request, sess *session) {
	items, next, err := s.cfg.Backend.Schedules(r.Context(), 0, kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 200})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "schedules", sess, map[string]any{"Schedules": items, "Next": next})
}

func (s *Server) cancelPost(w http.ResponseWriter, r *http.Request, sess *session) {
	err := s.cfg.Backend.CancelSchedule(r.Context(), r.PostFormValue("id"))
	s.recordConsoleWrite(r, sess, statusFor(err))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	back(w, r, "/console/schedules", "Cancelled.")
}

func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	status := r.URL.Query().Get("status")
	if !approvalStatuses[status] {
		status = ""
	}
	items, next, err := s.cfg.Backend.Approvals(r.Context(), status, kairos.Page{Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "approvals", sess, map[string]any{"Approvals": approvalsJSON(items), "Status": status, "Next": next})
}

func (s *Server) decidePost(w http.ResponseWriter, r *http.Request, sess *session) {
	approve := r.PostFormValue("approve") == "1"
	said, err := s.cfg.Backend.DecideApproval(r.Context(), r.PostFormValue("id"), approve, fmt.Sprintf("console:%d", sess.UserID))
	s.recordConsoleWrite(r, sess, statusFor(err))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	back(w, r, "/console/approvals", said)
}

func (s *Server) usagePage(w http.ResponseWriter, r *http.Request, sess *session) {
	u, err := s.cfg.Backend.Usage(r.Context(), 0, s.cfg.Now().AddDate(0, 0, -30))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	b, _ := json.MarshalIndent(u, "", "  ")
	days, costs := dailyCost(u)
	s.render(w, r, http.StatusOK, "usage", sess, map[string]any{"JSON": string(b),
		"Chart": barChart(costs, func(i int) string { return days[i] })})
}

// dailyCost sums a usage report's rows per day (their "day" and
// "cost_usd" fields as `kairos usage` prints them).
func dailyCost(u any) ([]string, []float64) {
	b, _ := json.Marshal(u)
	var rows []map[string]any
	_ = json.Unmarshal(b, &rows)
	sum := map[string]float64{}
	var days []string
	for _, row := range rows {
		d, _ := row["day"].(string)
		c, _ := row["cost_usd"].(float64)
		if _, ok := sum[d]; !ok {
			days = append(days, d)
		}
		sum[d] += c
	}
	out := make([]float64, len(days))
	for i, d := range days {
		out[i] = sum[d]
	}
	return days, out
}

func (s *Server) policyPage(w http.ResponseWriter, r *http.Request, sess *session) {
	text, _ := s.cfg.Backend.PolicyText()
	s.render(w, r, http.StatusOK, "policy", sess, map[string]any{"Text": text, "Saved": r.URL.Query().Get("saved") == "1"})
}

func (s *Server) policyPost(w http.ResponseWriter, r *http.Request, sess *session) {
	text := r.PostFormValue("text")
	probs, err := s.cfg.Backend.ReplacePolicy(r.Context(), []byte(text))
	status := statusFor(err)
	if err == nil && len(probs) > 0 {
		status = http.StatusUnprocessableEntity
	}
	s.recordConsoleWrite(r, sess, status)
	if kairos.ErrorCode(err) == kairos.EFORBIDDEN { // it would widen the policy: say which key, keep the text
		s.render(w, r, http.StatusForbidden, "policy", sess, map[string]any{"Text": text, "Refused": kairos.ErrorMessage(err)})
		return
	}
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	if len(probs) > 0 {
		s.render(w, r, http.StatusUnprocessableEntity, "policy", sess, map[string]any{"Text": text, "Problems": probs})
		return
	}
	http.Redirect(w, r, "/console/policy?saved=1", http.StatusSeeOther)
}

// statusFor is the HTTP status an error stands for (200 for none).
func statusFor(err error) int {
	if err == nil {
		return http.StatusOK
	}
	if st, ok := statusOf[kairos.ErrorCode(err)]; ok {
		return st
	}
	return http.StatusInternalServerError
}

func (s *Server) skillsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	v, err := s.cfg.Backend.Skills(r.Context())
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "skills", sess, map[string]any{"Skills": v})
}

func (s *Server) skillPage(w http.ResponseWriter, r *http.Request, sess *session) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		s.consoleError(w, r, kairos.Errorf(kairos.EINVALID, "A skill's id is a number."))
		return
	}
	v, err := s.cfg.Backend.Skill(r.Context(), id)
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "skill", sess, map[string]any{"Skill": v})
}

func (s *Server) skillPost(w http.ResponseWriter, r *http.Request, sess *session) {
	id, err := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
	action := r.PostFormValue("action")
	if err != nil || !skillActions[action] {
		s.consoleError(w, r, kairos.Errorf(kairos.EINVALID, "Unknown skill or action."))
		return
	}
	to, _ := strconv.Atoi(r.PostFormValue("to"))
	said, err := s.cfg.Backend.SkillAction(r.Context(), id, action, to)
	s.recordConsoleWrite(r, sess, statusFor(err))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/console/skill?id=%d&flash=%s", id, url.QueryEscape(said)), http.StatusSeeOther)
}
