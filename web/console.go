package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"time"

	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/usage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var funcs = template.FuncMap{
	"usd":       USD,
	"thousands": usage.Thousands,
	"millis":    Millis,
	"telegram":  TelegramHTML,
}

// pages are parsed once: each page is the layout plus its own content.
var pages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	names, _ := fs.Glob(templateFS, "templates/*.html")
	for _, n := range names {
		name := n[len("templates/") : len(n)-len(".html")]
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return out
}()

// navEntry is one link of the console's menu. A new page adds its entry
// here, its route in registerConsole and its template
// (templates/<page>.html); its title comes from here too.
type navEntry struct {
	Page, Title, Path string
	Hidden            bool // a page reached from another (a thread, a skill), not from the menu
}

var nav = []navEntry{
	{Page: "overview", Title: "Overview", Path: "/console/"},
	{Page: "users", Title: "Users", Path: "/console/users"},
	{Page: "threads", Title: "Threads", Path: "/console/threads", Hidden: true},
	{Page: "thread", Title: "Thread", Path: "/console/thread", Hidden: true},
	{Page: "memories", Title: "Memories", Path: "/console/memories"},
	{Page: "schedules", Title: "Schedules", Path: "/console/schedules"},
	{Page: "approvals", Title: "Approvals", Path: "/console/approvals"},
	{Page: "grants", Title: "Grants", Path: "/console/grants"},
	{Page: "skills", Title: "Skills", Path: "/console/skills"},
	{Page: "skill", Title: "Skill", Path: "/console/skill", Hidden: true},
	{Page: "tools", Title: "Tools", Path: "/console/tools"},
	{Page: "usage", Title: "Usage", Path: "/console/usage"},
	{Page: "research", Title: "Research", Path: "/console/research"},
	{Page: "access", Title: "Access log", Path: "/console/access"},
	{Page: "policy", Title: "Policy", Path: "/console/policy"},
	{Page: "login", Title: "Sign in", Hidden: true},
}

func titleOf(page string) string {
	for _, e := range nav {
		if e.Page == page {
			return e.Title
		}
	}
	return page
}

// view is what every page template sees. Its methods write times in the
// operator's zone and users by name.
type view struct {
	Title, Page, CSRF, Flash string
	Session                  bool
	Nav                      []navEntry
	Data                     any
	zone                     *time.Location
	now                      time.Time
	people                   map[string]Person
}

// When writes an instant in the operator's zone: "Sat 29 Nov, 09:00 Lisbon".
func (v view) When(t time.Time) string { return When(t, v.zone, v.now) }

// At writes an instant to the second in the operator's zone (the access
// log): "Sat 29 Nov, 09:00:12 Lisbon".
func (v view) At(t time.Time) string {
	l := t.In(v.zone)
	return l.Format("Mon 2 Jan, 15:04:05") + " " + ZoneName(v.zone, t)
}

// Ago writes how far an instant is from now: "8 min ago", "in 3 h".
func (v view) Ago(t time.Time) string { return Relative(t, v.now) }

// Person names a user by key ("telegram:42"), by their Telegram names
// when they are known.
func (v view) Person(key string) string {
	if p, ok := v.people[key]; ok {
		return p.Name()
	}
	return key
}

// page is what a handler hands to render: the template's data and the
// users it names (looked up once per page).
type pageData struct {
	name   string
	data   any
	people []string
}

// render writes a page with the console's security headers.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, sess *session, data any) {
	s.renderPage(w, r, status, sess, pageData{name: name, data: data})
}

func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, sess *session, p pageData) {
	v := view{Title: titleOf(p.name), Page: p.name, Data: p.data, Nav: nav, now: s.cfg.Now(), zone: time.UTC}
	if sess != nil {
		v.Session, v.CSRF = true, sess.CSRF
		v.zone = s.cfg.Backend.Zone(r.Context(), sess.UserID)
		if f := r.URL.Query().Get("flash"); f != "" {
			v.Flash = f
		}
		v.people = s.people(r, p.people)
	}
	var buf bytes.Buffer
	if err := pages[p.name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.Error("render console page", "page", p.name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// people looks the users' names up (a page without them still renders:
// the keys stand in).
func (s *Server) people(r *http.Request, keys []string) map[string]Person {
	if len(keys) == 0 {
		return nil
	}
	names, err := s.cfg.Backend.Names(r.Context(), keys)
	if err != nil {
		s.log.Warn("console: user names", "err", err)
		return nil
	}
	out := make(map[string]Person, len(names))
	for k, n := range names {
		out[k] = Person{Key: k, UserName: n}
	}
	return out
}

func (s *Server) consoleError(w http.ResponseWriter, r *http.Request, err error) {
	if desk.Fault(err) {
		s.log.Error("console request failed", "err", err)
	}
	http.Error(w, desk.Reply(err), statusFor(err))
}

func (s *Server) registerConsole(mux *http.ServeMux) {
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	handle := func(pattern string, h http.Handler) { mux.Handle(pattern, s.logged("console", h)) }
	handle("GET /console/login", http.HandlerFunc(s.loginPage))
	handle("POST /console/login", http.HandlerFunc(s.login))
	handle("POST /console/logout", s.withSession(s.logout))
	handle("GET /console/{$}", s.withSession(s.overviewPage))
	mux.Handle("GET /console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	handle("GET /console/users", s.withSession(s.usersPage))
	handle("GET /console/threads", s.withSession(s.threadsPage))
	handle("GET /console/thread", s.withSession(s.threadPage))
	handle("GET /console/memories", s.withSession(s.memoriesPage))
	handle("POST /console/memories/forget", s.withSession(s.forgetPost))
	handle("GET /console/schedules", s.withSession(s.schedulesPage))
	handle("POST /console/schedules/cancel", s.withSession(s.cancelPost))
	handle("GET /console/approvals", s.withSession(s.approvalsPage))
	handle("POST /console/approvals/decide", s.withSession(s.decidePost))
	handle("GET /console/grants", s.withSession(s.grantsPage))
	handle("POST /console/grants/revoke", s.withSession(s.revokeGrantPost))
	handle("GET /console/skills", s.withSession(s.skillsPage))
	handle("GET /console/skill", s.withSession(s.skillPage))
	handle("POST /console/skill/action", s.withSession(s.skillPost))
	handle("GET /console/tools", s.withSession(s.toolsPage))
	handle("GET /console/usage", s.withSession(s.usagePage))
	handle("GET /console/access", s.withSession(s.accessPage))
	handle("GET /console/research", s.withSession(s.researchPage))
	handle("GET /console/policy", s.withSession(s.policyPage))
	handle("POST /console/policy", s.withSession(s.policyPost))
}

// back redirects to a page with a one-line note.
func back(w http.ResponseWriter, r *http.Request, to, flash string) {
	http.Redirect(w, r, to+"?flash="+template.URLQueryEscaper(flash), http.StatusSeeOther)
}
