package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"time"

	"github.com/kairos-agent/kairos/desk"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var funcs = template.FuncMap{
	// when shows a time (or its RFC 3339 text, as JSON rows carry it).
	"when": func(v any) string {
		t, _ := v.(time.Time)
		if s, ok := v.(string); ok {
			t, _ = time.Parse(time.RFC3339Nano, s)
		}
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
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

// view is what every page template sees.
type view struct {
	Title, Page, CSRF, Flash string
	Session                  bool
	Data                     any
}

var titles = map[string]string{"overview": "Overview", "users": "Users", "threads": "Threads", "thread": "Thread",
	"memories": "Memories", "schedules": "Schedules", "approvals": "Approvals", "policy": "Policy", "usage": "Usage", "login": "Sign in", "skills": "Skills", "skill": "Skill"}

// render writes a page with the console's security headers.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, sess *session, data any) {
	v := view{Title: titles[name], Page: name, Data: data}
	if sess != nil {
		v.Session, v.CSRF = true, sess.CSRF
	}
	if t, ok := data.(jsonPage); ok {
		v.Title, v.Page = t.Title, t.Page
	}
	if f := r.URL.Query().Get("flash"); f != "" && sess != nil {
		v.Flash = f
	}
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.Error("render console page", "page", name, "err", err)
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

func (s *Server) consoleError(w http.ResponseWriter, r *http.Request, err error) {
	if desk.Fault(err) {
		s.log.Error("console request failed", "err", err)
	}
	http.Error(w, desk.Reply(err), statusFor(err))
}

func (s *Server) registerConsole(mux *http.ServeMux) {
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /console/login", s.loginPage)
	mux.HandleFunc("POST /console/login", s.login)
	mux.Handle("POST /console/logout", s.withSession(s.logout))
	mux.Handle("GET /console/{$}", s.withSession(s.overviewPage))
	mux.Handle("GET /console", http.RedirectHandler("/console/", http.StatusMovedPermanently))
	mux.Handle("GET /console/users", s.withSession(s.usersPage))
	mux.Handle("GET /console/threads", s.withSession(s.threadsPage))
	mux.Handle("GET /console/thread", s.withSession(s.threadPage))
	mux.Handle("GET /console/memories", s.withSession(s.memoriesPage))
	mux.Handle("POST /console/memories/forget", s.withSession(s.forgetPost))
	mux.Handle("GET /console/schedules", s.withSession(s.schedulesPage))
	mux.Handle("POST /console/schedules/cancel", s.withSession(s.cancelPost))
	mux.Handle("GET /console/approvals", s.withSession(s.approvalsPage))
	mux.Handle("POST /console/approvals/decide", s.withSession(s.decidePost))
	mux.Handle("GET /console/skills", s.withSession(s.skillsPage))
	mux.Handle("GET /console/skill", s.withSession(s.skillPage))
	mux.Handle("POST /console/skill/action", s.withSession(s.skillPost))
	mux.Handle("GET /console/tools", s.withSession(s.jsonPageOf("tools", "Tools", "The tools the model is offered and the MCP servers' state.",
		func(r *http.Request) (any, error) { return s.cfg.Backend.Tools(r.Context()) })))
	mux.Handle("GET /console/usage", s.withSession(s.usagePage))
	mux.Handle("GET /console/policy", s.withSession(s.policyPage))
	mux.Handle("POST /console/policy", s.withSession(s.policyPost))
}

// jsonPage shows a value as indented JSON.
type jsonPage struct {
	Title, Page, Note string
	JSON              string
}

func (s *Server) jsonPageOf(page, title, note string, get func(*http.Request) (any, error)) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, sess *session) {
		v, err := get(r)
		if err != nil {
			s.consoleError(w, r, err)
			return
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		s.render(w, r, http.StatusOK, "json", sess, jsonPage{Title: title, Page: page, Note: note, JSON: string(b)})
	}
}

// back redirects to a page with a one-line note.
func back(w http.ResponseWriter, r *http.Request, to, flash string) {
	http.Redirect(w, r, to+"?flash="+template.URLQueryEscaper(flash), http.StatusSeeOther)
}

// barChart draws values as an inline SVG bar chart (no script, no
// external asset: the CSP allows neither).
func barChart(values []float64, label func(i int) string) template.HTML {
	const w, h, pad = 600, 160, 18
	peak := 0.0
	for _, v := range values {
		peak = max(peak, v)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img">`, w, h+pad)
	if len(values) == 0 {
		b.WriteString(`</svg>`)
		return template.HTML(b.String())
	}
	bw := float64(w) / float64(len(values))
	for i, v := range values {
		bh := 0.0
		if peak > 0 {
			bh = v / peak * h
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %g</title></rect>`,
			float64(i)*bw+1, h-bh, max(bw-2, 1), bh, template.HTMLEscapeString(label(i)), v)
	}
	fmt.Fprintf(&b, `<text x="0" y="%d">%s</text><text x="%d" y="%d" text-anchor="end">%s · peak %g</text></svg>`,
		h+pad-4, template.HTMLEscapeString(label(0)), w, h+pad-4, template.HTMLEscapeString(label(len(values)-1)), peak)
	return template.HTML(b.String())
}
