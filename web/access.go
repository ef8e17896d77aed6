package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/kairos-agent/kairos"
)

// The access log: every request to the API and the console (not the
// style sheet), with who made it, through which token or session, its
// path (never the query: a sign-in link's secret travels there) and its
// status. The maintenance job keeps 30 days of it.

// who is filled in by the authentication that accepted the request.
type who struct{ actor, via string }

type whoKey struct{}

// setWho records who a request is (for the access log).
func setWho(ctx context.Context, actor, via string) {
	if w, ok := ctx.Value(whoKey{}).(*who); ok {
		w.actor, w.via = actor, via
	}
}

// logged records each request h answers in the access log.
func (s *Server) logged(door string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.cfg.Now()
		id := &who{}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			p := recover()
			if p != nil { // net/http answers a panic by dropping the connection
				rec.status = http.StatusInternalServerError
			}
			e := &kairos.AccessEntry{At: start, Door: door, Actor: id.actor, Via: id.via, Method: r.Method, Path: r.URL.Path,
				Status: rec.status, Elapsed: s.cfg.Now().Sub(start)}
			if err := s.cfg.Store.RecordAccess(context.WithoutCancel(r.Context()), e); err != nil {
				s.log.Error("record access", "err", err)
			}
			if p != nil {
				panic(p)
			}
		}()
		h.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), whoKey{}, id)))
	})
}

// accessRow is one line of the access log page.
type accessRow struct {
	*kairos.AccessEntry
	User string // the operator's key, for a console session
}

func (s *Server) accessPage(w http.ResponseWriter, r *http.Request, sess *session) {
	entries, next, err := s.cfg.Store.AccessLog(r.Context(), kairos.Page{Cursor: r.URL.Query().Get("cursor"), Limit: 100})
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	rows := make([]accessRow, len(entries))
	var keys []string
	for i, e := range entries {
		rows[i] = accessRow{AccessEntry: e}
		if id, ok := consoleActor(e.Actor); ok {
			rows[i].User = kairos.UserKey(kairos.ChannelTelegram, id)
			keys = append(keys, rows[i].User)
		}
	}
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "access", data: obj{"Rows": rows, "Next": next, "Keep": Span(accessKeep)}, people: keys})
}

// accessKeep is how long the log keeps a request (jobs.AccessLogKeep).
const accessKeep = 30 * 24 * time.Hour

// consoleActor reads "console:<user id>".
func consoleActor(actor string) (int64, bool) {
	const prefix = "console:"
	if len(actor) <= len(prefix) || actor[:len(prefix)] != prefix {
		return 0, false
	}
	id, err := strconv.ParseInt(actor[len(prefix):], 10, 64)
	return id, err == nil
}
