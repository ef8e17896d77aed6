package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// apiFallback answers what no route of the API takes, in the API's JSON
// error body (the mux answered a plain-text 404 or 405): 404 for a path
// no route has, 405 with Allow for a path whose routes take other
// methods.
func (s *Server) apiFallback() http.Handler {
	paths := http.NewServeMux()
	allow := map[string][]string{}
	for _, r := range s.apiRoutes() {
		if _, ok := allow[r.path]; !ok {
			paths.Handle(r.path, http.NotFoundHandler()) // only its pattern is used
		}
		allow[r.path] = append(allow[r.path], r.method)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := r.Clone(r.Context())
		probe.Method = http.MethodGet
		if _, pattern := paths.Handler(probe); pattern != "" {
			methods := slices.Sorted(slices.Values(allow[pattern]))
			w.Header().Set("Allow", strings.Join(methods, ", "))
			s.writeStatus(w, http.StatusMethodNotAllowed, "EMETHOD",
				r.Method+" is not served at "+r.URL.Path+"; it takes "+strings.Join(methods, ", ")+".")
			return
		}
		s.writeError(w, kairos.Errorf(kairos.ENOTFOUND, "No API resource at %s (GET /api/v1/openapi.json lists them).", r.URL.Path))
	})
}

// writeStatus writes the contract's error body with a status of its own.
func (s *Server) writeStatus(w http.ResponseWriter, status int, code, msg string) {
	var body apiError
	body.Error.Code, body.Error.Message = code, msg
	writeJSON(w, status, body)
}
