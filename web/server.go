package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
)

// Config wires the front end.
type Config struct {
	Backend Backend
	Store   kairos.APIStore
	// ConsoleURL is the public base URL of the console's sign-in links
	// (KAIROS_CONSOLE_URL); an https URL makes the cookie Secure.
	ConsoleURL string
	Now        func() time.Time
	Logger     *slog.Logger
}

// Server serves /api/v1 and /console.
type Server struct {
	cfg Config
	log *slog.Logger
	// doc is the OpenAPI document, built once from the route table.
	doc func() obj
}

// New returns the front end.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "web")}
	s.doc = sync.OnceValue(s.openAPIDoc)
	return s
}

// Register adds the API's and the console's routes to mux.
func (s *Server) Register(mux *http.ServeMux) {
	for _, r := range s.apiRoutes() {
		mux.Handle(r.method+" "+r.path, s.logged("api", s.apiAuth(r)))
	}
	mux.Handle("/api/v1/", s.apiFallback()) // JSON 404 and 405 (notfound.go)
	s.registerConsole(mux)
}

// apiError is the contract's error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var statusOf = map[string]int{
	kairos.EINVALID: http.StatusBadRequest, kairos.ENOTFOUND: http.StatusNotFound,
	kairos.ECONFLICT: http.StatusConflict, kairos.EUNAUTHORIZED: http.StatusUnauthorized,
	kairos.EFORBIDDEN: http.StatusForbidden, kairos.EBUDGET: http.StatusTooManyRequests,
	kairos.EUNAVAILABLE: http.StatusServiceUnavailable,
}

// writeError turns an error into the contract's body; only EINTERNAL is
// logged, and its message stays in the log.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	code := kairos.ErrorCode(err)
	status, ok := statusOf[code]
	msg := desk.Reply(err) // the same words every door says
	if !ok {
		code, status = kairos.EINTERNAL, http.StatusInternalServerError
	}
	if desk.Fault(err) {
		s.log.Error("api request failed", "err", err)
	}
	var body apiError
	body.Error.Code, body.Error.Message = code, msg
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// actorKey is where the authenticated caller's name travels.
type actorKey struct{}

func actorOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

// apiAuth checks the bearer token and its scope, and records writes.
func (s *Server) apiAuth(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.scope == "" { // the OpenAPI document is public
			rt.handle(s, w, r)
			return
		}
		secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || secret == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kairos"`)
			s.writeError(w, kairos.Errorf(kairos.EUNAUTHORIZED, "An API token is required: Authorization: Bearer <token> (kairos token create)."))
			return
		}
		tok, err := s.cfg.Store.APITokenByHash(r.Context(), kairos.HashSecret(strings.TrimSpace(secret)), s.cfg.Now())
		if err != nil {
			if kairos.ErrorCode(err) == kairos.ENOTFOUND {
				err = kairos.Errorf(kairos.EUNAUTHORIZED, "This token is unknown or revoked.")
			}
			s.writeError(w, err)
			return
		}
		if !tok.Allows(rt.scope) {
			s.writeError(w, kairos.Errorf(kairos.EFORBIDDEN, "This token's scope is %s; this request needs %s.", tok.Scope, rt.scope))
			return
		}
		setWho(r.Context(), "token:"+tok.Name, "token "+tok.ID)
		ctx := context.WithValue(r.Context(), actorKey{}, "token:"+tok.Name)
		if rt.scope == kairos.ScopeRead {
			rt.handle(s, w, r.WithContext(ctx))
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		rt.handle(s, rec, r.WithContext(ctx))
		s.recordWrite(ctx, r, rec.status)
	})
}

// recordWrite appends a write to the record (its failure is logged, the
// change itself already happened).
func (s *Server) recordWrite(ctx context.Context, r *http.Request, status int) {
	err := s.cfg.Store.RecordAPIWrite(context.WithoutCancel(ctx), &kairos.APIWrite{Actor: actorOf(ctx), Method: r.Method,
		Path: r.URL.Path, Status: status, CreatedAt: s.cfg.Now()})
	if err != nil {
		s.log.Error("record api write", "err", err)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// decodeBody reads a JSON body of at most 1 MiB into v, strictly.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return kairos.Errorf(kairos.EINVALID, "The body is over 1 MiB.")
		}
		return kairos.Errorf(kairos.EINVALID, "The body is not the JSON this request takes: %v", err)
	}
	return nil
}
