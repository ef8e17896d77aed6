package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/internal/obs"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/sandbox"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/tools"
	codetool "github.com/kairos-agent/kairos/tools/code"
	memorytool "github.com/kairos-agent/kairos/tools/memory"
	searchtool "github.com/kairos-agent/kairos/tools/search"
)

// core is everything `run` and `chat` share.
type core struct {
	log      *slog.Logger
	metrics  *obs.Metrics
	policy   func() *kairos.Policy
	watcher  *policy.Watcher
	db       *store.DB
	sessions *store.SessionStore
	updates  *store.UpdateLog
	memories *store.MemoryStore
	code     *store.CodeStore
	clock    *clockstate.Wrapper
	model    *openai.Client
	runner   *lazyRunner
	agent    *agent.Agent
	registry *tools.Registry
	now      func() time.Time

	// onPolicyError tells the operators about a bad policy edit (the bot
	// sets it once it runs).
	mu            sync.Mutex
	onPolicyError func(err error)
}

func (m *Main) logger() *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(m.Config.LogLevel))
	return obs.NewLogger(m.Stderr, m.Config.LogFormat, level, m.Config.SensitiveValues())
}

// openStore opens the database (migrating it).
func (m *Main) openStore(ctx context.Context, log *slog.Logger) (*store.DB, error) {
	db, err := store.Open(ctx, store.Config{DataDir: m.Config.DataDir, DatabaseURL: m.Config.DatabaseURL, Logger: log})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINVALID {
			return nil, usagef("%s", kairos.ErrorMessage(err))
		}
		return nil, fmt.Errorf("open database: %w", err)
	}
	m.onClose(db.Close)
	return db, nil
}

// loadPolicy starts the policy watcher (or the defaults when there is no
// file) and returns the source of the policy in force.
func (m *Main) loadPolicy(log *slog.Logger, onChange func(*kairos.Policy, error)) (func() *kairos.Policy, *policy.Watcher, error) {
	res, err := policy.LoadFile(m.Config.PolicyPath)
	if err != nil {
		return nil, nil, usagef("policy %s:\n%v", m.Config.PolicyPath, err)
	}
	if res.Defaults {
		log.Info("no policy file; built-in defaults apply", "path", m.Config.PolicyPath)
	}
	w, err := policy.NewWatcher(m.Config.PolicyPath, log, onChange)
	if err != nil {
		log.Warn("policy hot reload unavailable", "err", err)
		p := res.Policy
		return func() *kairos.Policy { return p }, nil, nil
	}
	m.onClose(func() error { w.Close(); return nil })
	return w.Current, w, nil
}

// openCore wires the pipeline.
func (m *Main) openCore(ctx context.Context) (*core, error) {
	c := &core{log: m.logger(), metrics: obs.NewMetrics(), now: time.Now}
	var err error
	c.policy, c.watcher, err = m.loadPolicy(c.log, func(p *kairos.Policy, err error) {
		if err == nil {
			c.log.Info("policy reloaded")
			return
		}
		c.log.Error("policy reload rejected; the last good policy stays in force", "err", err)
		c.mu.Lock()
		f := c.onPolicyError
		c.mu.Unlock()
		if f != nil {
			f(err)
		}
	})
	if err != nil {
		return nil, err
	}
	if c.db, err = m.openStore(ctx, c.log); err != nil {
		return nil, err
	}
	c.sessions = store.NewSessionStore(c.db)
	c.updates = store.NewUpdateLog(c.db)
	c.memories = store.NewMemoryStore(c.db)
	c.code = store.NewCodeStore(c.db)
	c.clock = clockstate.New(store.NewClockStore(c.db), clockstate.Config{Policy: c.policy, Logger: c.log})
	c.model = openai.New(openai.Config{BaseURL: m.Config.OpenAIBaseURL, APIKey: m.Config.OpenAIKey,
		EmbeddingModel: m.Config.EmbeddingModel, Logger: c.log})
	c.runner = &lazyRunner{cfg: sandbox.Config{CacheDir: filepath.Join(m.Config.DataDir, "wazero-cache"), Logger: c.log}, metrics: c.metrics}
	m.onClose(func() error { return c.runner.Close(context.Background()) })

	search, err := searchtool.New(searchtool.Config{Provider: m.Config.SearchProvider, BaseURL: searchBase(m.Config),
		BraveKey: m.Config.BraveKey, TavilyKey: m.Config.TavilyKey, Logger: c.log})
	if err != nil {
		return nil, usagef("search: %s", kairos.ErrorMessage(err))
	}
	var embedder kairos.Embedder
	if m.Config.EmbeddingModel != "" {
		embedder = c.model
	}
	memory := memorytool.New(c.memories, memorytool.Config{Embedder: embedder, Logger: c.log,
		OnNewSession: func(ctx context.Context, inv *kairos.ToolInvocation) (string, error) {
			return c.endSession(ctx, inv.ThreadKey, inv.UserKey, "", inv.Now)
		}})
	code := codetool.New(codetool.Config{Runner: c.runner, Store: c.code, Model: c.model, Policy: c.policy,
		CoderModel: func() string { return m.models(c.policy())[0] }, Secrets: m.Config.Secrets, Logger: c.log})
	c.registry = tools.NewRegistry(search, code, memory)

	c.agent = agent.New(agent.Config{
		Model: c.model, Sessions: c.sessions, Clock: c.clock, Tools: c.registry, Memories: c.memories,
		Policy: c.policy, Models: append([]string{m.Config.Model}, m.Config.FallbackModels...),
		SecretNames: m.Config.SecretNames(), Logger: c.log,
		Modes: store.NewModeStore(c.db), Observer: c.metrics,
	})
	return c, nil
}

func (m *Main) models(p *kairos.Policy) []string {
	if p.Agent.Model != "" {
		return []string{p.Agent.Model}
	}
	return []string{m.Config.Model}
}

func searchBase(c Config) string {
	if c.SearchProvider == "searxng" {
		return c.SearchURL
	}
	return ""
}

// lazyRunner compiles the WASM engine on first use, so a bot that never
// runs code never pays for it (idle memory stays small).
type lazyRunner struct {
	cfg     sandbox.Config
	metrics *obs.Metrics
	once    sync.Once
	r       *sandbox.Runner
	err     error
}

func (l *lazyRunner) get(ctx context.Context) (*sandbox.Runner, error) {
	l.once.Do(func() { l.r, l.err = sandbox.New(context.WithoutCancel(ctx), l.cfg) })
	return l.r, l.err
}

func (l *lazyRunner) Run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	r, err := l.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	res, err := r.Run(ctx, task)
	if err == nil && l.metrics != nil {
		l.metrics.Cell(res.Success, res.Duration)
	}
	return res, err
}

func (l *lazyRunner) Close(ctx context.Context) error {
	if l.r == nil {
		return nil
	}
	return l.r.Close(ctx)
}

// endSession writes the session's conversation summary (a model call) as
// a memory and on the session, then opens the next session.
func (c *core) endSession(ctx context.Context, threadKey, userKey, name string, at time.Time) (string, error) {
	sess, err := c.sessions.OpenSession(ctx, threadKey, userKey, at)
	if err != nil {
		return "", err
	}
	msgs, err := c.sessions.Messages(ctx, sess.ID, 0, 0)
	if err != nil {
		return "", err
	}
	summary := ""
	if len(msgs) > 0 {
		summary, err = c.summarize(ctx, sess, msgs)
		if err != nil {
			return "", err
		}
		_, _, err = c.memories.StoreMemory(ctx, &kairos.Memory{UserKey: userKey, Store: kairos.StoreSummaries,
			Type: kairos.SummaryConversation, Content: summary, PeriodKey: memorytool.PeriodKey(kairos.SummaryConversation, at),
			ChatID: sess.ID, CreatedAt: at, UpdatedAt: at})
		if err != nil {
			return "", err
		}
	}
	if name == "" {
		name = "Session " + at.UTC().Format("2006-01-02 15:04")
	}
	if _, err := c.sessions.EndSession(ctx, sess.ID, summary, at, name); err != nil {
		return "", err
	}
	return name, nil
}

func (c *core) summarize(ctx context.Context, sess *kairos.Session, msgs []*kairos.Message) (string, error) {
	var b strings.Builder
	if sess.RunningSummary != "" {
		b.WriteString("Earlier: " + sess.RunningSummary + "\n")
	}
	for _, m := range msgs {
		if (m.Role == kairos.RoleUser || m.Role == kairos.RoleAssistant) && m.Content != "" {
			fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
		}
	}
	text := b.String()
	if len(text) > 24000 {
		text = text[len(text)-24000:]
	}
	resp, err := c.model.Chat(ctx, kairos.ChatRequest{Model: "", MaxTokens: 400, Messages: []kairos.ChatMessage{
		{Role: kairos.RoleSystem, Content: "Summarize this conversation for your own later reference: facts learned, decisions, open loops, dates. At most 150 words. Reply with the summary only."},
		{Role: kairos.RoleUser, Content: text},
	}}, nil)
	if err != nil {
		return "", fmt.Errorf("summarize session: %w", err)
	}
	return strings.TrimSpace(resp.Message.Content), nil
}

// readiness checks the database and the model endpoint.
func (c *core) ready(ctx context.Context) error {
	if err := c.db.Ping(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if err := c.model.Ping(ctx); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

func (c *core) adminMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := c.ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", c.metrics.Handler())
	return mux
}
