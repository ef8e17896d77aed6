package web

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request, sess *session) {
	o, err := s.cfg.Backend.Overview(r.Context())
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	zone, now := s.cfg.Backend.Zone(r.Context(), sess.UserID), s.cfg.Now()
	minutes := make([]string, len(o.TurnsPerMinute))
	turns := make([]float64, len(o.TurnsPerMinute))
	total := 0
	for i, v := range o.TurnsPerMinute {
		minutes[i] = now.Add(-time.Duration(len(turns)-1-i) * time.Minute).In(zone).Format("15:04")
		turns[i] = float64(v)
		total += v
	}
	var lat []float64
	for _, v := range o.ModelLatencyMS {
		if v > 0 {
			lat = append(lat, v)
		}
	}
	median := 0.0
	if len(lat) > 0 {
		slices.Sort(lat)
		median = lat[len(lat)/2]
	}
	xTitle := "minute (" + ZoneName(zone, now) + ")"
	turnsChart := s.chart(figure{Title: "Turns per minute, last hour", Legend: "turns", XTitle: xTitle, XHead: "Minute", YHead: "Turns",
		Labels: minutes, Values: turns, Format: count, XLabels: 6})
	latChart := s.chart(figure{Title: "Model latency, median per minute", Legend: "ms", XTitle: xTitle, XHead: "Minute",
		YHead: "Median latency", Labels: minutes[:len(o.ModelLatencyMS)], Values: o.ModelLatencyMS, Format: Millis, XLabels: 6})
	s.render(w, r, http.StatusOK, "overview", sess, obj{"O": o, "Turns": total, "Median": median,
		"TurnsChart": turnsChart, "LatencyChart": latChart})
}

// chart renders a figure; a chart that cannot be drawn is logged and its
// table stays.
func (s *Server) chart(f figure) template.HTML {
	h, err := f.render()
	if err != nil {
		s.log.Warn("console chart", "chart", f.Title, "err", err)
	}
	return h
}

func (s *Server) usersPage(w http.ResponseWriter, r *http.Request, sess *session) {
	users, next, err := s.cfg.Backend.Users(r.Context(), kairos.Page{Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "users", sess, obj{"Users": users, "Next": next})
}

func (s *Server) threadsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	user := r.URL.Query().Get("user")
	threads, _, err := s.cfg.Backend.Threads(r.Context(), user, kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 200})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "threads", data: obj{"Threads": threads, "User": user}, people: []string{user}})
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
	s.render(w, r, http.StatusOK, "thread", sess, obj{"Thread": t, "Messages": msgs, "Next": next})
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
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = m.UserKey
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "memories", data: obj{"Memories": memoriesJSON(ms), "Next": next, "User": user, "Q": text},
		people: keys})
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

// scheduleRow is a schedule on the page: its next run also in its own
// zone when that is not the operator's.
type scheduleRow struct {
	ScheduleRow
	User, Local string
}

func (s *Server) schedulesPage(w http.ResponseWriter, r *http.Request, sess *session) {
	items, next, err := s.cfg.Backend.Schedules(r.Context(), 0, kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 200})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	zone := s.cfg.Backend.Zone(r.Context(), sess.UserID)
	rows := make([]scheduleRow, len(items))
	keys := make([]string, len(items))
	for i, it := range items {
		rows[i] = scheduleRow{ScheduleRow: it, User: kairos.UserKey(kairos.ChannelTelegram, it.UserID)}
		keys[i] = rows[i].User
		if loc, err := time.LoadLocation(it.TZ); err == nil && ZoneName(loc, it.NextRun) != ZoneName(zone, it.NextRun) {
			rows[i].Local = it.NextRun.In(loc).Format("15:04") + " " + ZoneName(loc, it.NextRun)
		}
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "schedules", data: obj{"Schedules": rows, "Next": next}, people: keys})
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

// approvalCard is an approval request as the chat showed it.
type approvalCard struct {
	approvalJSON
	User    string
	Message template.HTML
	Decider string
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
	cards := make([]approvalCard, len(items))
	var keys []string
	for i, a := range approvalsJSON(items) {
		cards[i] = approvalCard{approvalJSON: a, User: kairos.UserKey(kairos.ChannelTelegram, a.UserID),
			Message: approvalMessage(a.Text), Decider: a.DecidedBy}
		keys = append(keys, cards[i].User)
		if id, ok := consoleActor(a.DecidedBy); ok {
			cards[i].Decider = kairos.UserKey(kairos.ChannelTelegram, id)
			keys = append(keys, cards[i].Decider)
		}
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "approvals", data: obj{"Approvals": cards, "Status": status, "Next": next}, people: keys})
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

func (s *Server) policyPage(w http.ResponseWriter, r *http.Request, sess *session) {
	s.renderPolicy(w, r, sess, http.StatusOK, obj{"Saved": r.URL.Query().Get("saved") == "1"})
}

// renderPolicy shows the editor with the file's text (or the text that
// was refused) beside the policy in force.
func (s *Server) renderPolicy(w http.ResponseWriter, r *http.Request, sess *session, status int, data obj) {
	pv, err := s.cfg.Backend.PolicyView()
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	data["View"] = pv
	if _, ok := data["Text"]; !ok {
		data["Text"] = pv.Text
	}
	s.render(w, r, status, "policy", sess, data)
}

func (s *Server) policyPost(w http.ResponseWriter, r *http.Request, sess *session) {
	text := r.PostFormValue("text")
	probs, err := s.cfg.Backend.ReplacePolicy(r.Context(), []byte(text))
	status := statusFor(err)
	if err == nil && len(probs) > 0 {
		status = http.StatusUnprocessableEntity
	}
	s.recordConsoleWrite(r, sess, status)
	switch {
	case err != nil && kairos.ErrorCode(err) != kairos.EFORBIDDEN:
		s.consoleError(w, r, err)
	case err != nil: // it would widen the policy: say which key, keep the text
		s.renderPolicy(w, r, sess, http.StatusForbidden, obj{"Text": text, "Refused": kairos.ErrorMessage(err)})
	case len(probs) > 0:
		s.renderPolicy(w, r, sess, status, obj{"Text": text, "Problems": probs})
	default:
		http.Redirect(w, r, "/console/policy?saved=1", http.StatusSeeOther)
	}
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
	keys := make([]string, len(v))
	for i, sk := range v {
		keys[i] = sk.Owner
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "skills", data: obj{"Skills": v}, people: keys})
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
	keys := []string{v.Skill.Owner}
	for _, ver := range v.Versions {
		keys = append(keys, ver.CreatedBy, ver.ApprovedBy)
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "skill", data: obj{"Skill": v}, people: keys})
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

func (s *Server) toolsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	v, err := s.cfg.Backend.Tools(r.Context())
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "tools", sess, obj{"Tools": v})
}
