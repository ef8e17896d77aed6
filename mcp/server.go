package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/retry"
)

// stableAfter is how long a connection must last for the next failure to
// start the backoff over.
const stableAfter = time.Minute

// server supervises the connection to one MCP server.
type server struct {
	m      *Manager
	name   string
	spec   kairos.MCPServer
	key    string
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	state    string
	lastErr  string
	restarts int
	session  *sdk.ClientSession
	proc     *exec.Cmd // the stdio process of the current connection
	group    *group    // and its process group
	tools    []remoteTool
	skipped  [][2]string // tool name, why
}

// remoteTool is a listed tool, its spec prepared for the model.
type remoteTool struct {
	remote string
	spec   kairos.ToolSpec
}

// connKey is what, when it changes, needs a new connection.
func connKey(s kairos.MCPServer) string {
	b, _ := json.Marshal([]any{s.TransportKind(), s.Command, s.Args, s.Env, s.SecretEnv, s.URL, s.TokenSecret})
	return string(b)
}

func newServer(m *Manager, name string, spec kairos.MCPServer) *server {
	ctx, cancel := context.WithCancel(context.Background())
	return &server{m: m, name: name, spec: spec, key: connKey(spec), log: m.log.With("server", name),
		ctx: ctx, cancel: cancel, done: make(chan struct{}), state: StateConnecting}
}

func (s *server) stop() { s.cancel() }

// run connects, waits for the connection to end, and reconnects with
// exponential backoff until the server is stopped.
func (s *server) run() {
	defer close(s.done)
	delay := s.m.cfg.MinBackoff
	for s.ctx.Err() == nil {
		started := s.m.cfg.Now()
		cs, err := s.connect(s.ctx)
		if err != nil {
			if s.ctx.Err() != nil {
				break
			}
			s.setDown(err)
			s.log.Warn("mcp server unavailable", "err", err, "retry_in", delay)
		} else {
			s.serve(cs)
			if s.ctx.Err() != nil {
				break
			}
			s.setDown(errors.New("the connection ended"))
			s.log.Warn("mcp server stopped; restarting", "retry_in", delay)
			if s.m.cfg.Now().Sub(started) >= stableAfter {
				delay = s.m.cfg.MinBackoff
			}
		}
		if retry.Sleep(s.ctx, delay) != nil {
			break
		}
		delay = min(2*delay, s.m.cfg.MaxBackoff)
		s.mu.Lock()
		s.restarts++
		s.state = StateConnecting
		s.mu.Unlock()
		s.m.notify()
	}
	s.mu.Lock()
	s.state, s.session, s.tools = StateDisabled, nil, nil
	s.mu.Unlock()
	s.m.notify()
}

// serve marks the session ready and returns when it ends: the process
// exited, a ping failed, a call found the connection closed, or the
// server was stopped.
func (s *server) serve(cs *sdk.ClientSession) {
	ended := make(chan struct{})
	go func() {
		cs.Wait()
		close(ended)
	}()
	if s.spec.TransportKind() == kairos.MCPHTTP {
		go s.ping(cs, ended)
	}
	select {
	case <-ended:
	case <-s.ctx.Done():
	}
	closeBounded(cs, s.log)
	s.endProcess()
}

// endProcess kills what is left of the stdio process of the last
// connection, its whole process group: the SDK ends the server itself
// (stdin closed, SIGTERM, SIGKILL) but not what the server started, and a
// server that ignores all of it would outlive Kairos.
func (s *server) endProcess() {
	s.mu.Lock()
	cmd, g := s.proc, s.group
	s.proc, s.group = nil, nil
	s.mu.Unlock()
	if g != nil {
		g.end(cmd)
	}
}

// closeBounded closes a session, waiting a bounded time: a hung server
// may never let Close finish (an HTTP DELETE that is not answered, a
// process that ignores the end of stdin), and a reload or a shutdown must
// not hang on it.
func closeBounded(cs *sdk.ClientSession, log *slog.Logger) {
	closed := make(chan struct{})
	go func() {
		cs.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(closeWait):
		log.Warn("mcp server did not close in time; left behind", "waited", closeWait)
	}
}

// closeWait bounds closing a session: the SDK gives a stdio process 2s
// after stdin closes, then SIGTERM, then SIGKILL.
const closeWait = 6 * time.Second

// ping notices an HTTP server that went away (an HTTP session has no
// process whose exit would tell).
func (s *server) ping(cs *sdk.ClientSession, ended <-chan struct{}) {
	t := time.NewTicker(s.m.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ended:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(s.ctx, s.m.cfg.ConnectTimeout)
			err := cs.Ping(ctx, nil)
			cancel()
			if err != nil && s.ctx.Err() == nil {
				s.log.Warn("mcp server did not answer a ping", "err", err)
				cs.Close()
				return
			}
		}
	}
}

// broken closes a session a call found dead, so that run reconnects.
func (s *server) broken(cs *sdk.ClientSession) {
	s.mu.Lock()
	if s.session == cs {
		s.session = nil
		s.state = StateDown
		s.lastErr = "the connection ended during a call"
	}
	s.mu.Unlock()
	s.m.notify()
	cs.Close()
}

func (s *server) setDown(err error) {
	s.mu.Lock()
	s.state, s.session, s.tools, s.lastErr = StateDown, nil, nil, kairos.Clip(err.Error(), 300)
	s.mu.Unlock()
	s.m.notify()
}

// connect opens a session and lists the server's tools.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	t, err := s.transport()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.m.cfg.ConnectTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "kairos", Version: s.m.cfg.Version}, &sdk.ClientOptions{Logger: s.log,
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) { go s.relist(req.Session) }})
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		s.endProcess()
		return nil, fmt.Errorf("connect: %w", s.clean(err))
	}
	listed, skipped, err := s.listTools(cctx, cs)
	if err != nil {
		closeBounded(cs, s.log)
		s.endProcess()
		return nil, err
	}
	s.mu.Lock()
	s.state, s.session, s.tools, s.skipped, s.lastErr = StateReady, cs, listed, skipped, ""
	s.mu.Unlock()
	s.m.notify()
	s.log.Info("mcp server connected", "tools", len(listed))
	return cs, nil
}

// listTools lists a session's tools, prepared for the model, by name.
func (s *server) listTools(ctx context.Context, cs *sdk.ClientSession) ([]remoteTool, [][2]string, error) {
	var listed []remoteTool
	var skipped [][2]string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("list tools: %w", s.clean(err))
		}
		spec, why := modelSpec(s.name, tl)
		if why != "" {
			s.log.Warn("mcp tool not offered", "tool", kairos.Clip(tl.Name, 80), "why", why)
			skipped = append(skipped, [2]string{s.m.red.Scrub(kairos.Clip(tl.Name, 80)), why})
			continue
		}
		listed = append(listed, remoteTool{remote: tl.Name, spec: s.m.scrubSpec(spec)})
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].remote < listed[j].remote })
	return listed, skipped, nil
}

// relist follows a server's notice that its tools changed. New tools are
// offered only if the allow-list names them (or is "*").
func (s *server) relist(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.ctx, s.m.cfg.ConnectTimeout)
	defer cancel()
	listed, skipped, err := s.listTools(ctx, cs)
	if err != nil {
		s.log.Warn("mcp tools changed but could not be listed", "err", err)
		return
	}
	s.mu.Lock()
	if s.session != cs {
		s.mu.Unlock()
		return
	}
	s.tools, s.skipped = listed, skipped
	s.mu.Unlock()
	s.m.notify()
	s.log.Info("mcp server tools changed", "tools", len(listed))
}

// clean keeps secrets out of an error: the manager's redactor already
// holds every configured secret (the bearer token and secret_env values
// among them) in raw, encoded and split forms; the error is clipped to
// one short message.
func (s *server) clean(err error) error {
	return errors.New(kairos.Clip(s.m.red.Scrub(err.Error()), 300))
}

// transport builds the SDK transport for the server's settings.
func (s *server) transport() (sdk.Transport, error) {
	switch s.spec.TransportKind() {
	case kairos.MCPHTTP:
		hc := &http.Client{Transport: http.DefaultTransport}
		if name := s.spec.TokenSecret; name != "" {
			tok := s.m.cfg.Secrets[name]
			if tok == "" {
				return nil, fmt.Errorf("secret %s is not set (KAIROS_SECRET_%s)", name, name)
			}
			hc.Transport = bearer{token: tok, next: http.DefaultTransport}
		}
		return &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil
	default:
		cmd := exec.Command(s.spec.Command, s.spec.Args...)
		cmd.Env = baseEnv()
		for _, k := range sortedNames(s.spec.Env) {
			cmd.Env = append(cmd.Env, k+"="+s.spec.Env[k])
		}
		for _, k := range sortedNames(s.spec.SecretEnv) {
			name := s.spec.SecretEnv[k]
			v := s.m.cfg.Secrets[name]
			if v == "" {
				return nil, fmt.Errorf("secret %s is not set (KAIROS_SECRET_%s)", name, name)
			}
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = &lineLogger{log: s.log}
		cmd.WaitDelay = time.Second // a grandchild holding stderr must not hold Wait
		g := newGroup(s.log)
		g.isolate(cmd)
		s.mu.Lock()
		s.proc, s.group = cmd, g
		s.mu.Unlock()
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	}
}

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// current is the ready session, or nil.
func (s *server) current() *sdk.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateReady {
		return nil
	}
	return s.session
}

func (s *server) snapshot() (string, []remoteTool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateReady {
		return s.state, nil
	}
	return s.state, s.tools
}

func (s *server) status() (ServerStatus, []remoteTool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.name, Transport: s.spec.TransportKind(), State: s.state, Restarts: s.restarts}
	if s.state != StateReady {
		st.Error = s.lastErr
		return st, nil
	}
	return st, s.tools
}

func (s *server) skippedTools() [][2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateReady {
		return nil
	}
	return s.skipped
}

// lineLogger writes a stdio server's stderr to the log, one line at a time.
type lineLogger struct {
	log    *slog.Logger
	emitFn func(string) // tests
	mu     sync.Mutex
	buf    []byte
}

const maxStderrLine = 1000

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxStderrLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) emit(line []byte) {
	s := string(bytes.TrimRight(line, "\r"))
	switch {
	case s == "":
	case l.emitFn != nil:
		l.emitFn(s)
	default:
		l.log.Info("mcp server stderr", "line", kairos.Clip(s, maxStderrLine))
	}
}
