package web

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
)

const (
	// LinkTTL is how long a sign-in link from /console stays valid.
	LinkTTL = 10 * time.Minute
	// SessionTTL is how long a console session lasts.
	SessionTTL   = 12 * time.Hour
	cookieName   = "kairos_console"
	consolePath  = "/console"
	linkPrefix   = "kcl_"
	cookiePrefix = "kcs_"
)

// SignInLink makes a single-use sign-in link for an operator, valid for
// LinkTTL. The caller (the bot's /console) checks the user is one.
func (s *Server) SignInLink(ctx context.Context, userID int64) (string, error) {
	if !s.cfg.Backend.IsOperator(userID) {
		return "", kairos.Errorf(kairos.EFORBIDDEN, "The console is for operators.")
	}
	secret := kairos.NewSecret(linkPrefix)
	if err := s.cfg.Store.CreateConsoleLink(ctx, kairos.HashSecret(secret), userID, s.cfg.Now().Add(LinkTTL)); err != nil {
		return "", err
	}
	return strings.TrimRight(s.cfg.ConsoleURL, "/") + consolePath + "/login?t=" + url.QueryEscape(secret), nil
}

// secure reports whether cookies must be Secure (the console is reached
// over https, directly or behind a proxy).
func (s *Server) secure(r *http.Request) bool {
	return strings.HasPrefix(s.cfg.ConsoleURL, "https://") || r.TLS != nil
}

// loginPage shows a button that spends the link: a GET never does, so a
// link preview or a prefetch cannot use it up.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", nil, obj{"Token": r.URL.Query().Get("t")})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	uid, err := s.cfg.Store.UseConsoleLink(r.Context(), kairos.HashSecret(r.PostFormValue("t")), s.cfg.Now())
	if err == nil && !s.cfg.Backend.IsOperator(uid) {
		err = kairos.Errorf(kairos.EFORBIDDEN, "You are no longer an operator.")
	}
	if err != nil {
		s.render(w, r, http.StatusForbidden, "login", nil, obj{"Error": kairos.ErrorMessage(err)})
		return
	}
	setWho(r.Context(), "console:"+strconv.FormatInt(uid, 10), "sign-in link")
	secret, now := kairos.NewSecret(cookiePrefix), s.cfg.Now()
	cs := &kairos.ConsoleSession{UserID: uid, CSRF: kairos.NewSecret(""), CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}
	if err := s.cfg.Store.CreateConsoleSession(r.Context(), kairos.HashSecret(secret), cs); err != nil {
		s.consoleError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: consolePath, HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL.Seconds())})
	s.log.Info("console sign-in", "user", uid)
	http.Redirect(w, r, consolePath+"/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, sess *session) {
	if err := s.cfg.Store.EndConsoleSession(r.Context(), sess.hash, s.cfg.Now()); err != nil {
		s.consoleError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: consolePath, HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	s.render(w, r, http.StatusOK, "login", nil, obj{"Error": "Signed out. Send /console to the bot for a new link."})
}

// session is a signed-in request's operator.
type session struct {
	*kairos.ConsoleSession
	hash string
}

// withSession admits a request with a live session of a current
// operator; a POST must also carry the session's CSRF token.
func (s *Server) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(cookieName)
		var cs *kairos.ConsoleSession
		hash := ""
		if err == nil {
			hash = kairos.HashSecret(c.Value)
			cs, err = s.cfg.Store.ConsoleSession(r.Context(), hash, s.cfg.Now())
		}
		if err != nil || !s.cfg.Backend.IsOperator(cs.UserID) {
			s.render(w, r, http.StatusUnauthorized, "login", nil, obj{"Error": "Sign in with a link: send /console to the bot."})
			return
		}
		sess := &session{ConsoleSession: cs, hash: hash}
		setWho(r.Context(), "console:"+strconv.FormatInt(cs.UserID, 10), "session "+hash[:8])
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(cs.CSRF)) != 1 {
				http.Error(w, "This form is stale or forged (CSRF token mismatch); reload the page.", http.StatusForbidden)
				return
			}
		}
		h(w, r, sess)
	})
}

// recordConsoleWrite records a change made from the console.
func (s *Server) recordConsoleWrite(r *http.Request, sess *session, status int) {
	ctx := context.WithValue(r.Context(), actorKey{}, "console:"+strconv.FormatInt(sess.UserID, 10))
	s.recordWrite(ctx, r, status)
}
