package mcp

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/redact"
)

// Server states, as /tools and `kairos mcp check` show them.
const (
	StateConnecting = "connecting"
	StateReady      = "ready"
	StateDown       = "down" // crashed or unreachable; being retried with backoff
	StateDisabled   = "disabled"
)

// Observer counts MCP calls (internal/obs implements it).
type Observer interface {
	MCPCall(server, tool, outcome string, d time.Duration)
}

// Config configures a Manager.
type Config struct {
	// Secrets are KAIROS_SECRET_<NAME> values by NAME: bearer tokens and
	// secret_env come from here.
	Secrets map[string]string
	Logger  *slog.Logger
	// Observer counts calls by server, tool and outcome (may be nil).
	Observer Observer
	Now      func() time.Time
	// MinBackoff and MaxBackoff bound the wait before a crashed or
	// unreachable server is tried again (defaults 1s and 1m); the wait
	// doubles at each failure and starts over after a minute of health.
	MinBackoff, MaxBackoff time.Duration
	// ConnectTimeout bounds connecting and listing tools (default 30s).
	ConnectTimeout time.Duration
	// PingInterval is how often an HTTP server is pinged to notice it is
	// gone (default 30s).
	PingInterval time.Duration
	// Version is reported to servers as the client's version.
	Version string
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(time.Minute, c.MinBackoff)
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 30 * time.Second
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 30 * time.Second
	}
	if c.Version == "" {
		c.Version = "dev"
	}
}

// Manager keeps one supervised connection per enabled server of the
// policy in force. Apply it to every policy the watcher loads.
type Manager struct {
	cfg Config
	log *slog.Logger
	red *redact.Redactor // every configured secret (redact.go)

	mu      sync.Mutex
	servers map[string]*server
	changed chan struct{} // closed and replaced at every state change
	closed  bool
}

var _ kairos.ToolRegistry = (*Manager)(nil)

// New returns a Manager with no server; Apply starts them.
func New(cfg Config) *Manager {
	cfg.defaults()
	return &Manager{cfg: cfg, log: cfg.Logger.With("component", "mcp"), red: redact.ForSecrets(cfg.Secrets), servers: map[string]*server{}, changed: make(chan struct{})}
}

// Apply connects the servers p lists and disconnects the others. A server
// whose connection settings (transport, command, args, env, url, token)
// did not change keeps its connection: allow-lists, impacts and timeouts
// are read from the policy at every turn. It returns at once; servers
// connect in the background.
func (m *Manager) Apply(p *kairos.Policy) {
	if p == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	for name, s := range m.servers {
		spec, ok := p.MCP.Servers[name]
		if ok && !spec.Disabled && connKey(spec) == s.key {
			continue
		}
		s.stop()
		delete(m.servers, name)
		m.log.Info("mcp server disconnected", "server", name, "why", map[bool]string{true: "settings changed", false: "removed or disabled"}[ok && !spec.Disabled])
	}
	for _, name := range sortedNames(p.MCP.Servers) {
		spec := p.MCP.Servers[name]
		if spec.Disabled || m.servers[name] != nil {
			continue
		}
		s := newServer(m, name, spec)
		m.servers[name] = s
		go s.run()
	}
	m.notifyLocked()
}

// Close disconnects every server and stops the stdio processes.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	ss := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		ss = append(ss, s)
	}
	m.servers = map[string]*server{}
	m.notifyLocked()
	m.mu.Unlock()
	for _, s := range ss {
		s.stop()
	}
	for _, s := range ss {
		<-s.done
	}
	return nil
}

func (m *Manager) notify() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notifyLocked()
}

func (m *Manager) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Wait blocks until cond holds for the servers' status (checked at every
// change) or ctx ends.
func (m *Manager) Wait(ctx context.Context, p *kairos.Policy, cond func([]ServerStatus) bool) error {
	for {
		m.mu.Lock()
		ch := m.changed
		m.mu.Unlock()
		if cond(m.Status(p)) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Tools returns the tools of the ready servers that p allows, by server
// name then tool name, at most p.MCP.MaxTools of them. A disabled, down
// or still connecting server has none.
func (m *Manager) Tools(p *kairos.Policy) []kairos.Tool {
	if p == nil || len(p.MCP.Servers) == 0 || p.MCP.MaxTools <= 0 {
		return nil
	}
	var out []kairos.Tool
	for _, name := range sortedNames(p.MCP.Servers) {
		spec := p.MCP.Servers[name]
		if spec.Disabled {
			continue
		}
		s := m.server(name)
		if s == nil {
			continue
		}
		_, listed := s.snapshot()
		for _, rt := range listed {
			if !spec.Allows(rt.remote) {
				continue
			}
			if len(out) >= p.MCP.MaxTools {
				return out
			}
			out = append(out, &tool{srv: s, remote: rt, impact: spec.ImpactOf(rt.remote), timeout: callTimeout(p.MCP, spec)})
		}
	}
	return out
}

func (m *Manager) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[name]
}

func callTimeout(mp kairos.MCPPolicy, s kairos.MCPServer) time.Duration {
	if d := s.CallTimeout.Approx(); d > 0 {
		return d
	}
	if d := mp.CallTimeout.Approx(); d > 0 {
		return d
	}
	return 30 * time.Second
}

// ServerStatus is one server as /tools shows it.
type ServerStatus struct {
	Name      string
	Transport string
	State     string // StateConnecting, StateReady, StateDown, StateDisabled
	Error     string // the last failure, when down
	Restarts  int    // reconnections since the server was applied
	Tools     []ToolStatus
}

// ToolStatus is one tool a ready server offers.
type ToolStatus struct {
	Name    string // <server>__<tool>
	Remote  string // the server's own name for it
	Impact  string // kairos.ImpactRead or kairos.ImpactWrite
	Allowed bool   // in the server's allow-list
	Offered bool   // allowed and within mcp.max_tools
	Skipped string // why the tool cannot be offered at all (bad name or schema)
}

// Status lists the servers p names, by name, with their tools.
func (m *Manager) Status(p *kairos.Policy) []ServerStatus {
	if p == nil {
		return nil
	}
	offered := map[string]bool{}
	for _, t := range m.Tools(p) {
		offered[t.Spec().Name] = true
	}
	var out []ServerStatus
	for _, name := range sortedNames(p.MCP.Servers) {
		spec := p.MCP.Servers[name]
		st := ServerStatus{Name: name, Transport: spec.TransportKind(), State: StateDisabled}
		if s := m.server(name); s != nil && !spec.Disabled {
			var listed []remoteTool
			st, listed = s.status()
			for _, rt := range listed {
				st.Tools = append(st.Tools, ToolStatus{Name: kairos.MCPToolName(name, rt.remote), Remote: rt.remote,
					Impact: spec.ImpactOf(rt.remote), Allowed: spec.Allows(rt.remote), Offered: offered[kairos.MCPToolName(name, rt.remote)]})
			}
			for _, sk := range s.skippedTools() {
				st.Tools = append(st.Tools, ToolStatus{Name: kairos.MCPToolName(name, sk[0]), Remote: sk[0], Impact: spec.ImpactOf(sk[0]),
					Allowed: spec.Allows(sk[0]), Skipped: sk[1]})
			}
			sort.Slice(st.Tools, func(i, j int) bool { return st.Tools[i].Remote < st.Tools[j].Remote })
		}
		out = append(out, st)
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// baseEnv is what a stdio server inherits from Kairos's environment:
// enough to find programs and write temporary files, none of Kairos's
// tokens and keys.
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR", "USER"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
