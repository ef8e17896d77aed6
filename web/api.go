package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

// route is one API endpoint; the OpenAPI document is built from these,
// so the two cannot drift.
type route struct {
	method, path string
	scope        string // "" public, else one of kairos.Scopes
	summary      string
	params       []param
	body         string // the request body's schema name, "" for none
	response     string // the 2xx body's schema name
	status       int    // the 2xx status
	errors       []int  // the error statuses it documents besides 401/403
	handle       func(s *Server, w http.ResponseWriter, r *http.Request)
}

type param struct {
	name, in, typ, desc string
	required            bool
}

var (
	pLimit  = param{name: "limit", in: "query", typ: "integer", desc: "items per page, 1 to 200 (default 50)"}
	pCursor = param{name: "cursor", in: "query", typ: "string", desc: "next_cursor of the previous page"}
	pUser   = param{name: "user", in: "query", typ: "string", desc: "a user key such as telegram:42"}
	pUserID = param{name: "user_id", in: "query", typ: "integer", desc: "a Telegram user id"}
	pID     = param{name: "id", in: "path", typ: "string", required: true}
)

func (s *Server) apiRoutes() []route {
	return []route{
		{method: "GET", path: "/api/v1/openapi.json", summary: "This document", response: "OpenAPI", status: 200, handle: (*Server).openAPI},
		{method: "GET", path: "/api/v1/users", scope: kairos.ScopeRead, summary: "Users by key", params: []param{pLimit, pCursor},
			response: "UserPage", status: 200, errors: []int{400}, handle: (*Server).listUsers},
		{method: "GET", path: "/api/v1/threads", scope: kairos.ScopeRead, summary: "Threads by key, of one user with ?user",
			params: []param{pUser, pLimit, pCursor}, response: "ThreadPage", status: 200, errors: []int{400}, handle: (*Server).listThreads},
		{method: "GET", path: "/api/v1/threads/{id}", scope: kairos.ScopeRead, summary: "One thread and its clock state",
			params: []param{pID}, response: "Thread", status: 200, errors: []int{404}, handle: (*Server).getThread},
		{method: "GET", path: "/api/v1/threads/{id}/messages", scope: kairos.ScopeRead, summary: "A thread's messages, oldest first",
			params: []param{pID, pLimit, pCursor}, response: "MessagePage", status: 200, errors: []int{400, 404}, handle: (*Server).listMessages},
		{method: "GET", path: "/api/v1/memories", scope: kairos.ScopeRead, summary: "Memories newest first; with ?q and ?user, ranked by relevance",
			params:   []param{pUser, {name: "q", in: "query", typ: "string", desc: "search text (needs user)"}, pLimit, pCursor},
			response: "MemoryPage", status: 200, errors: []int{400}, handle: (*Server).listMemories},
		{method: "DELETE", path: "/api/v1/memories/{id}", scope: kairos.ScopeWrite, summary: "Forget a memory of a user",
			params:   []param{pID, {name: "user", in: "query", typ: "string", required: true, desc: "the memory's user key"}},
			response: "Done", status: 200, errors: []int{400, 404}, handle: (*Server).forgetMemory},
		{method: "GET", path: "/api/v1/schedules", scope: kairos.ScopeRead, summary: "Pending schedules by next run, of one user with ?user_id",
			params: []param{pUserID, pLimit, pCursor}, response: "SchedulePage", status: 200, errors: []int{400}, handle: (*Server).listSchedules},
		{method: "POST", path: "/api/v1/schedules/{id}/cancel", scope: kairos.ScopeWrite, summary: "Cancel a schedule",
			params: []param{pID}, response: "Done", status: 200, errors: []int{404}, handle: (*Server).cancelSchedule},
		{method: "GET", path: "/api/v1/approvals", scope: kairos.ScopeRead, summary: "Approval requests newest first",
			params:   []param{{name: "status", in: "query", typ: "string", desc: "pending, approved, denied or expired"}, pLimit, pCursor},
			response: "ApprovalPage", status: 200, errors: []int{400}, handle: (*Server).listApprovals},
		{method: "POST", path: "/api/v1/approvals/{id}/decision", scope: kairos.ScopeWrite, summary: "Approve or deny a pending request",
			params: []param{pID}, body: "Decision", response: "DecisionResult", status: 200, errors: []int{400, 404}, handle: (*Server).decide},
		{method: "GET", path: "/api/v1/usage", scope: kairos.ScopeRead, summary: "Tokens, cost and calls per user, model and day",
			params:   []param{pUserID, {name: "since", in: "query", typ: "string", desc: "YYYY-MM-DD (default 30 days back)"}},
			response: "Usage", status: 200, errors: []int{400}, handle: (*Server).usage},
		{method: "GET", path: "/api/v1/skills", scope: kairos.ScopeRead, summary: "Approved skills", response: "Skills", status: 200, handle: (*Server).skills},
		{method: "GET", path: "/api/v1/skills/{id}", scope: kairos.ScopeRead, summary: "One skill with its kept versions and their diffs",
			params: []param{pID}, response: "Skill", status: 200, errors: []int{400, 404}, handle: (*Server).skill},
		{method: "POST", path: "/api/v1/skills/{id}/action", scope: kairos.ScopeWrite, summary: "Disable, enable, share, unshare or roll back a skill",
			params: []param{pID}, body: "SkillAction", response: "DecisionResult", status: 200, errors: []int{400, 404}, handle: (*Server).skillAction},
		{method: "GET", path: "/api/v1/research", scope: kairos.ScopeRead, summary: "Research traces newest first, of one user with ?user",
			params: []param{pUser, pLimit, pCursor}, response: "ResearchPage", status: 200, errors: []int{400}, handle: (*Server).listResearch},
		{method: "GET", path: "/api/v1/grants", scope: kairos.ScopeRead, summary: "Standing approvals in force (Allow 1h, Always here), newest first, of one user with ?user",
			params: []param{pUser}, response: "Grants", status: 200, errors: []int{400}, handle: (*Server).listGrants},
		{method: "DELETE", path: "/api/v1/grants/{id}", scope: kairos.ScopeWrite, summary: "Revoke a standing approval: the next such call asks again",
			params: []param{pID}, response: "Done", status: 200, errors: []int{404}, handle: (*Server).revokeGrant},
		{method: "GET", path: "/api/v1/tools", scope: kairos.ScopeRead, summary: "The model's tools and the MCP servers' state", response: "Tools", status: 200, handle: (*Server).tools},
		{method: "GET", path: "/api/v1/policy", scope: kairos.ScopeRead, summary: "The policy in force and its file's text", response: "Policy", status: 200, handle: (*Server).getPolicy},
		{method: "POST", path: "/api/v1/policy/check", scope: kairos.ScopeRead, summary: "Validate a policy text (the body, YAML) as kairos policy check does",
			body: "PolicyText", response: "PolicyCheck", status: 200, errors: []int{400}, handle: (*Server).checkPolicy},
		{method: "PUT", path: "/api/v1/policy", scope: kairos.ScopeAdmin, summary: "Replace the policy, only to narrow it: validated, written, hot-reloaded; " +
			"a bad text (422) or one that would widen it (403 naming the key: edit the policy file on the host) changes nothing",
			body: "PolicyText", response: "PolicyCheck", status: 200, errors: []int{400, 422}, handle: (*Server).replacePolicy},
		{method: "POST", path: "/api/v1/messages", scope: kairos.ScopeWrite, summary: "Run a turn as if the user had written; the answer also goes to their chat unless deliver is false",
			body: "MessageIn", response: "MessageOut", status: 200, errors: []int{400, 404}, handle: (*Server).postMessage},
	}
}

// page reads ?limit and ?cursor.
func page(r *http.Request) (kairos.Page, error) {
	p := kairos.Page{Cursor: r.URL.Query().Get("cursor")}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			return p, kairos.Errorf(kairos.EINVALID, "limit must be a number from 1 to 200.")
		}
		p.Limit = n
	}
	return p, nil
}

// pageBody is every list's shape.
type pageBody[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func writePage[T any](w http.ResponseWriter, items []T, next string) {
	if items == nil {
		items = []T{}
	}
	writeJSON(w, http.StatusOK, pageBody[T]{Items: items, NextCursor: next})
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	items, next, err := s.cfg.Backend.Users(r.Context(), p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writePage(w, items, next)
}

func (s *Server) listThreads(w http.ResponseWriter, r *http.Request) {
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	items, next, err := s.cfg.Backend.Threads(r.Context(), r.URL.Query().Get("user"), p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writePage(w, items, next)
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	t, err := s.cfg.Backend.Thread(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if _, err := s.cfg.Backend.Thread(r.Context(), r.PathValue("id")); err != nil {
		s.writeError(w, err)
		return
	}
	items, next, err := s.cfg.Backend.ThreadMessages(r.Context(), r.PathValue("id"), p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writePage(w, items, next)
}

// memoryJSON is a memory as the API shows it (the tool's shape).
type memoryJSON struct {
	ID        string    `json:"id"`
	User      string    `json:"user"`
	Store     string    `json:"store"`
	Type      string    `json:"type"`
	Content   string    `json:"content"`
	Tags      []string  `json:"tags,omitempty"`
	PeriodKey string    `json:"period_key,omitempty"`
	Tainted   bool      `json:"tainted,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func memoriesJSON(ms []*kairos.Memory) []memoryJSON {
	out := make([]memoryJSON, len(ms))
	for i, m := range ms {
		out[i] = memoryJSON{ID: m.ID, User: m.UserKey, Store: m.Store, Type: m.Type, Content: m.Content, Tags: m.Tags,
			PeriodKey: m.PeriodKey, Tainted: m.Tainted, CreatedAt: m.CreatedAt}
	}
	return out
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) {
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	q, user := strings.TrimSpace(r.URL.Query().Get("q")), r.URL.Query().Get("user")
	if q != "" {
		if user == "" {
			s.writeError(w, kairos.Errorf(kairos.EINVALID, "A search (q) needs the user whose memories it searches (user)."))
			return
		}
		ms, err := s.cfg.Backend.SearchMemories(r.Context(), user, q, max(p.Limit, 20))
		if err != nil {
			s.writeError(w, err)
			return
		}
		writePage(w, memoriesJSON(ms), "")
		return
	}
	ms, next, err := s.cfg.Backend.Memories(r.Context(), user, p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writePage(w, memoriesJSON(ms), next)
}

func (s *Server) forgetMemory(w http.ResponseWriter, r *http.Request) {
	user := r.URL.Query().Get("user")
	if user == "" {
		s.writeError(w, kairos.Errorf(kairos.EINVALID, "Say whose memory it is: ?user=telegram:<id>."))
		return
	}
	if err := s.cfg.Backend.ForgetMemory(r.Context(), user, r.PathValue("id")); err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// userID reads ?user_id (0 when absent).
func userID(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("user_id")
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, kairos.Errorf(kairos.EINVALID, "user_id must be a Telegram user id.")
	}
	return id, nil
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	uid, err := userID(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	p, err := page(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	items, next, err := s.cfg.Backend.Schedules(r.Context(), uid, p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	writePage(w, items, next)
}

func (s *Server) cancelSchedule(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Backend.CancelSchedule(r.Context(), r.PathValue("id")); err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
