package skill

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/redact"
	"github.com/kairos-agent/kairos/tools"
)

// Limits.
const (
	MaxCodeBytes        = 64 << 10 // a skill's code
	MaxDescriptionBytes = 200      // one line
	MaxSchemaBytes      = 8 << 10
	MaxInputBytes       = 16 << 10 // a test's or a call's input
	MaxResultBytes      = 16 << 10 // a run's result given to the model
	// PromptTokens bounds what the offered skill__ tools add to a prompt.
	PromptTokens = 400
	listTTL      = 2 * time.Second // another replica's change shows after at most this
	prepTTL      = 30 * time.Minute
	storeTimeout = 5 * time.Second
)

// Config configures the skills.
type Config struct {
	Store  kairos.SkillStore // required
	Runner kairos.CodeRunner // required: the sandbox
	Policy func() *kairos.Policy
	// Secrets are the cells' secrets by name (KAIROS_SECRET_<NAME>); a
	// skill gets only the ones it declares.
	Secrets map[string]string
	// Executions records every run as a code execution (optional).
	Executions kairos.CodeExecutionStore
	// Notify tells a skill's owner (a user key) something out of band:
	// that the skill was disabled after failing. Optional.
	Notify func(ctx context.Context, owner, text string)
	Now    func() time.Time
	Logger *slog.Logger
}

// Skills holds the skills of every user: it is the source of the
// skill__<name> tools (a kairos.ScopedToolRegistry) and makes the `skill`
// tool (Tool). Safe for concurrent use.
type Skills struct {
	cfg   Config
	log   *slog.Logger
	red   *redact.Redactor
	names []string // configured secret names, sorted

	mu    sync.Mutex
	lists map[string]listEntry // owner → enabled skills (own and shared)
	gen   uint64               // bumped by every write of this process
	preps map[string]*prepared // create/update/rollback calls prepared by Action, by call
}

type listEntry struct {
	at   time.Time
	gen  uint64
	list []*kairos.Skill
	runs map[string]*runTool // by name
}

var _ kairos.ScopedToolRegistry = (*Skills)(nil)

// New returns the skills.
func New(cfg Config) *Skills {
	if cfg.Policy == nil {
		cfg.Policy = kairos.DefaultPolicy
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Skills{cfg: cfg, log: cfg.Logger.With("component", "skill"), lists: map[string]listEntry{}, preps: map[string]*prepared{}}
	s.names = redact.SecretNames(cfg.Secrets)
	s.red = redact.ForSecrets(cfg.Secrets)
	return s
}

func (s *Skills) pol() *kairos.Policy {
	if p := s.cfg.Policy(); p != nil {
		return p
	}
	return kairos.DefaultPolicy()
}

// changed forgets the cached lists (a write of this process).
func (s *Skills) changed() {
	s.mu.Lock()
	s.gen++
	s.lists = map[string]listEntry{}
	s.mu.Unlock()
}

// Changed tells the skills that the store was changed by someone else
// (the /skills buttons, the CLI in this process).
func (s *Skills) Changed() { s.changed() }

// Tools implements kairos.ToolRegistry: without a user there are no skills.
func (s *Skills) Tools(p *kairos.Policy) []kairos.Tool { return s.ToolsFor(p, kairos.ToolScope{}) }

// ToolsFor implements kairos.ScopedToolRegistry: the user's enabled skills
// and the shared ones, as skill__<name> tools. Unless sc.All, at most
// skills.max_offered of them and at most PromptTokens of specs, the most
// relevant to sc.Query first. Nothing when features.self_update is off.
func (s *Skills) ToolsFor(p *kairos.Policy, sc kairos.ToolScope) []kairos.Tool {
	if p == nil {
		p = s.pol()
	}
	if !p.Features.SelfUpdate || sc.UserKey == "" {
		return nil
	}
	e, err := s.list(sc.UserKey)
	if err != nil {
		s.log.Warn("list skills", "err", err)
		return nil
	}
	list := e.list
	if !sc.All {
		list = pick(list, sc, p.Skills.MaxOffered, PromptTokens)
	}
	out := make([]kairos.Tool, 0, len(list))
	for _, sk := range list {
		out = append(out, e.runs[sk.Name])
	}
	return out
}

// list returns the owner's enabled skills (own and shared), cached for
// listTTL or until a write of this process.
func (s *Skills) list(owner string) (listEntry, error) {
	now := time.Now()
	s.mu.Lock()
	e, ok := s.lists[owner]
	gen := s.gen
	s.mu.Unlock()
	if ok && e.gen == gen && now.Sub(e.at) < listTTL {
		return e, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	list, err := s.cfg.Store.Skills(ctx, kairos.SkillFilter{Owner: owner, WithShared: true, EnabledOnly: true})
	if err != nil {
		return listEntry{}, err
	}
	list = slicesDeleteNoCurrent(list)
	e = listEntry{at: now, gen: gen, list: list, runs: make(map[string]*runTool, len(list))}
	for _, sk := range list {
		e.runs[sk.Name] = newRunTool(s, sk, owner)
	}
	s.mu.Lock()
	if s.gen == gen {
		s.lists[owner] = e
	}
	s.mu.Unlock()
	return e, nil
}

func slicesDeleteNoCurrent(list []*kairos.Skill) []*kairos.Skill {
	out := list[:0]
	for _, sk := range list {
		if sk.Current != nil {
			out = append(out, sk)
		}
	}
	return out
}

// pick keeps at most max skills and at most budget tokens of their specs,
// ranked by tools.Relevance (the registry's offer ranks by it too), then
// the most used, then by name (a skill the turn wants counts as named).
func pick(list []*kairos.Skill, sc kairos.ToolScope, max, budget int) []*kairos.Skill {
	msg := tools.NewMessage(sc.Query)
	type scored struct {
		sk    *kairos.Skill
		score int
	}
	ss := make([]scored, len(list))
	for i, sk := range list {
		name := kairos.SkillToolName(sk.Name)
		ss[i] = scored{sk, tools.Relevance(msg, sc.Wanted, name, sk.Current.Description)}
	}
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].score != ss[j].score {
			return ss[i].score > ss[j].score
		}
		if ss[i].sk.Runs != ss[j].sk.Runs {
			return ss[i].sk.Runs > ss[j].sk.Runs
		}
		return ss[i].sk.Name < ss[j].sk.Name
	})
	var out []*kairos.Skill
	used := 0
	for _, x := range ss {
		if len(out) >= max {
			break
		}
		n := specTokens(x.sk)
		if used+n > budget {
			continue
		}
		used += n
		out = append(out, x.sk)
	}
	return out
}

// estimateTokens is the agent's estimate: a token per 4 ASCII bytes, one
// per other character.
func estimateTokens(s string) int {
	ascii, other := 0, 0
	for _, r := range s {
		if r < 128 {
			ascii++
		} else {
			other++
		}
	}
	return (ascii+3)/4 + other
}
