package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	"github.com/kairos-agent/kairos/clockstate"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/internal/obs"
	"github.com/kairos-agent/kairos/internal/tokens"
	"github.com/kairos-agent/kairos/jobs"
	"github.com/kairos-agent/kairos/mcp"
	"github.com/kairos-agent/kairos/media"
	"github.com/kairos-agent/kairos/openai"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/sandbox"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/tools"
	codetool "github.com/kairos-agent/kairos/tools/code"
	memorytool "github.com/kairos-agent/kairos/tools/memory"
	"github.com/kairos-agent/kairos/tools/research"
	searchtool "github.com/kairos-agent/kairos/tools/search"
	"github.com/kairos-agent/kairos/usage"
)

// core is everything `run` and `chat` share.
type core struct {
	log     *slog.Logger
	metrics *obs.Metrics
	policy  func() *kairos.Policy
	// operators are the database's operators, merged into policy.
	operators *operators
	watcher   *policy.Watcher
	db        *store.DB
	sessions  *store.SessionStore
	updates   *store.UpdateLog
	memories  *store.MemoryStore
	code      *store.CodeStore
	grants    *store.GrantStore // standing approvals
	grantDesk *desk.Grants      // /grants, its buttons, the web's grants (grants.go)
	clock     *clockstate.Wrapper
	model     *openai.Client
	runner    *lazyRunner
	agent     *agent.Agent
	media     *media.Handler
	registry  *tools.Registry
	search    *searchtool.Tool // probed at start (startup.go)
	jobs      *jobs.Scheduler
	sched     *scheduleParts
	mcp       *mcp.Manager // guarded by mu: policy reloads may come before it exists
	skills    *skillParts
	research  *research.Engine // seed 004's research: the tool and /research (research.go)
	usage     *usage.Guard     // spending caps and cost accounting (usage.go)
	desk      *desk.Desk       // every door's way in: commands, who may run them, turns
	spend     kairos.Model     // c.model behind the caps: what every model user gets
	now       func() time.Time

	// onPolicyError tells the operators about a bad policy edit (the bot
	// sets it once it runs).
	mu            sync.Mutex
	onPolicyError func(err error)
	// tellOperators sends a message to every operator (set by run);
	// lastAuthAlert spaces the alerts about a refused model key.
	tellOperators func(ctx context.Context, text string)
	lastAuthAlert time.Time
	// onModelFailure hears every turn no model could answer (kairos chat
	// tells the terminal once, chat_notice.go).
	onModelFailure func(err error)
}

func (m *Main) logger() *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(m.Config.LogLevel))
	w := m.Stderr
	if m.logTo != nil {
		w = m.logTo
	}
	return obs.NewLogger(w, m.Config.LogFormat, level, m.Config.SensitiveValues())
}

// openStore opens the database (migrating it).
func (m *Main) openStore(ctx context.Context, log *slog.Logger) (*store.DB, error) {
	db, err := store.Open(ctx, store.Config{DataDir: m.Config.DataDir, DatabaseURL: m.Config.DatabaseURL, Logger: log})
	if err != nil {
		if kairos.ErrorCode(err) == kairos.EINVALID {
			return nil, usagef("%s", kairos.ErrorMessage(err))
		}
		return nil, fmt.Errorf("open database: %s", oneLine(err))
	}
	m.onClose(db.Close)
	return db, nil
}

// sandboxCache is the cells' compilation cache: KAIROS_DATA_DIR/wazero-cache,
// or Main.SandboxCacheDir when set.
func (m *Main) sandboxCache() string {
	if m.SandboxCacheDir != "" {
		return m.SandboxCacheDir
	}
	return filepath.Join(m.Config.DataDir, "wazero-cache")
}

// openStoreRO opens the database read-only for commands that only read:
// SQLite with mode=ro, no directory created, no migration run.
func (m *Main) openStoreRO(ctx context.Context, log *slog.Logger) (*store.DB, error) {
	db, err := store.Open(ctx, store.Config{DataDir: m.Config.DataDir, DatabaseURL: m.Config.DatabaseURL, Logger: log, ReadOnly: true})
	if err != nil {
		switch kairos.ErrorCode(err) {
		case kairos.EINVALID:
			return nil, usagef("%s", kairos.ErrorMessage(err))
		case kairos.ENOTFOUND:
			return nil, err
		}
		return nil, fmt.Errorf("open database: %s", oneLine(err))
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
		if m.Config.PolicySet {
			return nil, nil, usagef("KAIROS_POLICY=%s: no such file (unset KAIROS_POLICY to run on the built-in defaults)", m.Config.PolicyPath)
		}
	}
	w, err := policy.NewWatcher(m.Config.PolicyPath, log, onChange)
	if err != nil {
		log.Warn("policy hot reload unavailable", "err", err, "defaults", res.Defaults)
		p := res.Policy
		return func() *kairos.Policy { return p }, nil, nil
	}
	m.onClose(func() error { w.Close(); return nil })
	return w.Current, w, nil
}

// openCore wires the pipeline: each step constructs its parts from those
// of the steps before it (policy, stores, model, jobs, tools, agent).
func (m *Main) openCore(ctx context.Context) (*core, error) {
	c := &core{log: m.logger(), metrics: obs.NewMetrics(), now: time.Now}
	if m.Now != nil {
		c.now = m.Now
	}
	if err := m.watchPolicy(c); err != nil {
		return nil, err
	}
	if err := m.openStores(ctx, c); err != nil {
		return nil, err
	}
	m.openModel(c)
	clocks := store.NewClockStore(c.db)
	c.usage, c.spend = c.openUsage(clocks)
	m.openJobs(c, clocks)
	if err := m.openTools(c, clockstate.NewProvider(clocks, c.now, "")); err != nil {
		return nil, err
	}
	m.openAgent(c)
	c.desk = desk.New(desk.Config{Table: m.commands(c), Policy: c.policy, Access: c.updates, Next: c.media, Logger: c.log})
	return c, nil
}

// watchPolicy loads the policy; a reload re-applies the MCP servers, and a
// rejected one is told to the operators once the bot runs.
func (m *Main) watchPolicy(c *core) error {
	var err error
	c.policy, c.watcher, err = m.loadPolicy(c.log, func(p *kairos.Policy, err error) {
		if err == nil {
			c.log.Info("policy reloaded")
			c.applyMCP(p)
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
	return err
}

// openStores opens the database and its stores; the database's operators
// (a claimed bot) join the policy's.
func (m *Main) openStores(ctx context.Context, c *core) error {
	var err error
	if c.db, err = m.openStore(ctx, c.log); err != nil {
		return err
	}
	c.sessions = store.NewSessionStore(c.db)
	c.updates = store.NewUpdateLog(c.db)
	c.operators = &operators{}
	ids, err := c.updates.Operators(ctx)
	if err != nil {
		return err
	}
	c.operators.set(ids)
	c.policy = c.operators.wrap(c.policy)
	c.memories = store.NewMemoryStore(c.db)
	c.code = store.NewCodeStore(c.db)
	c.grants = store.NewGrantStore(c.db)
	c.clock = clockstate.New(store.NewClockStore(c.db), clockstate.Config{Policy: c.policy, Logger: c.log, Now: c.now})
	return nil
}

// openModel makes the model client and the (lazily started) sandbox.
func (m *Main) openModel(c *core) {
	c.model = openai.New(openai.Config{BaseURL: m.Config.OpenAIBaseURL, APIKey: m.Config.OpenAIKey,
		EmbeddingModel: m.Config.EmbeddingModel, EmbeddingDimensions: m.Config.EmbeddingDimensions, Logger: c.log,
		CountTokens: tokens.Count})
	c.runner = &lazyRunner{cfg: sandbox.Config{CacheDir: m.sandboxCache(), Logger: c.log}, metrics: c.metrics,
		shared: m.Cells}
	m.onClose(func() error { return c.runner.Close(context.Background()) })
}

// openJobs makes the background scheduler (rollover, summaries, pruning,
// backups on SQLite); it calls the agent only once it runs.
func (m *Main) openJobs(c *core, clocks *store.ClockStore) {
	jcfg := jobs.Config{
		Sessions: c.sessions, Memories: c.memories, Model: c.spend, Policy: c.policy, CountTokens: tokens.Count,
		Models:  func() []string { return c.agent.Models(c.policy()) },
		Journal: store.NewJobStore(c.db), Code: c.code, Prune: store.NewMaintenance(c.db), Logger: c.log, Now: c.now,
		// provider.SessionTimezone's answer from the two settings it
		// needs (one query; the rollover asks on every turn).
		Timezone: func(ctx context.Context, thread, _ string) *time.Location {
			sessionTZ, defaultTZ, err := clocks.SessionZones(ctx, clockstate.DMUserKey(thread), thread)
			if err != nil {
				return nil
			}
			loc, _ := clockstate.LoadTZ(clockstate.ResolveSessionTZ("", sessionTZ, defaultTZ, nil, c.now()).TZ)
			return loc
		},
		CompactClock: func(ctx context.Context, now time.Time) error {
			return clocks.CompactAllClockActions(ctx, now, c.policy().Clock.Store.LatestActions.MaxItems)
		},
	}
	if c.db.Dialect() == store.DialectSQLite {
		jcfg.Backup, jcfg.BackupDir = c.db.Backup, filepath.Join(m.Config.DataDir, "backups")
	}
	c.jobs = jobs.New(jcfg)
}

// openTools makes the tools (search, code, memory, schedules, skills, MCP)
// and the registry that offers them.
func (m *Main) openTools(c *core, provider *clockstate.Provider) error {
	search, err := searchtool.New(searchtool.Config{Provider: m.Config.SearchProvider, BaseURL: searchBase(m.Config),
		BraveKey: m.Config.BraveKey, TavilyKey: m.Config.TavilyKey, Logger: c.log})
	if err != nil {
		return usagef("search: %s", kairos.ErrorMessage(err))
	}
	c.search = search
	code := codetool.New(codetool.Config{Runner: c.runner, Store: c.code, Model: c.spend, Policy: c.policy, CountTokens: tokens.Count,
		CoderModel: func() string { return c.agent.Models(c.policy())[0] }, Secrets: m.Config.Secrets, Logger: c.log})
	m.onClose(code.Close)
	c.sched = newSchedules(c, provider)
	c.skills = newSkills(m, c)
	c.research = m.newResearch(c)
	c.registry = tools.NewRegistry(search, code, m.memoryTool(c), c.sched.tool, c.skills.tools.Tool(), c.research.Tool()).
		WithSource(c.openMCP(m)).WithSource(c.skills.tools)
	c.grantDesk = c.newGrantDesk()
	return nil
}

// memoryTool is the memory tool; its new-session request ends the session
// through the jobs' rollover.
func (m *Main) memoryTool(c *core) kairos.Tool {
	var embedder kairos.Embedder
	if m.Config.EmbeddingModel != "" {
		embedder = &usage.Embedder{Next: c.model, Model: m.Config.EmbeddingModel, Guard: c.usage}
	}
	return memorytool.New(c.memories, memorytool.Config{Embedder: embedder, Logger: c.log,
		OnNewSession: func(ctx context.Context, inv *kairos.ToolInvocation) (string, error) {
			// Ended once this turn is saved, so the turn belongs to (and is
			// summarised with) the session it happened in.
			thread, user, at := inv.ThreadKey, inv.UserKey, inv.Now
			err := kairos.AfterTurn(ctx, func(ctx context.Context) error {
				_, err := c.jobs.Sessions().End(ctx, thread, user, "", at)
				return err
			})
			if err != nil {
				return "", err
			}
			return "This session ends after your answer; the next message starts a new one with its summary.", nil
		}})
}

// openAgent makes the agent (and the schedules' task agent, the same
// configuration) and the media handler in front of it.
func (m *Main) openAgent(c *core) {
	acfg := agent.Config{
		Model: c.spend, Sessions: c.sessions, Clock: c.clock, Tools: c.registry, Memories: c.memories,
		Policy: c.policy, Models: append([]string{m.Config.Model}, m.Config.FallbackModels...),
		Logger: c.log,
		Modes:  store.NewModeStore(c.db), Grants: c.grants, Observer: c.metrics, Rollover: c.jobs.Sessions().Rollover,
		VisionModel:    m.Config.VisionModel,
		OnModelFailure: func(ctx context.Context, err error) { m.modelFailure(ctx, c, err) },
		CountTokens:    tokens.Count,
	}
	c.agent = agent.New(acfg)
	c.sched.taskAgent = newTaskAgent(acfg)
	watcher := &codetool.Watcher{Runner: c.runner, Store: c.code, Policy: c.policy, Now: c.now, Logger: c.log}
	c.sched.firings = &desk.Firings{Task: c.sched.taskAgent, RunCell: watcher.Run, Now: c.now}
	c.media = m.newMedia(c)
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
	// shared, when set, runs the cells instead (Main.Cells: tests share
	// one warm engine).
	shared kairos.CodeRunner
}

func (l *lazyRunner) get(ctx context.Context) (*sandbox.Runner, error) {
	l.once.Do(func() { l.r, l.err = sandbox.New(context.WithoutCancel(ctx), l.cfg) })
	return l.r, l.err
}

// Run runs a cell. The turn that waits for it (a skill's call, which runs
// its cell in the turn; the engine's first compilation) has nothing of its
// own to do, so it lends its worker to other chats meanwhile
// (kairos.Blocked), as the code tool's wait for its cell does.
func (l *lazyRunner) Run(ctx context.Context, task *kairos.CellTask) (res *kairos.CellResult, err error) {
	kairos.Blocked(ctx, func() { res, err = l.run(ctx, task) })
	return res, err
}

func (l *lazyRunner) run(ctx context.Context, task *kairos.CellTask) (*kairos.CellResult, error) {
	if l.shared != nil {
		return l.shared.Run(ctx, task)
	}
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
	// Waits for a start in progress; afterwards no cell can start one.
	l.once.Do(func() { l.err = fmt.Errorf("sandbox closed") })
	if l.r == nil {
		return nil
	}
	return l.r.Close(ctx)
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
