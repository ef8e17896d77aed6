package main

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/store"
	skilltool "github.com/kairos-agent/kairos/tools/skill"
)

// skillParts are the skills of `run` and `chat`: the store, the `skill`
// tool with its skill__<name> tools, and the bot once it runs (to tell an
// owner their skill was disabled, and for the /skills keyboard).
type skillParts struct {
	store *store.SkillStore
	tools *skilltool.Skills
	panel *desk.Skills // /skills, its buttons, the console's actions

	mu  sync.Mutex
	bot *bot.Bot
}

func newSkills(m *Main, c *core) *skillParts {
	sp := &skillParts{store: store.NewSkillStore(c.db)}
	sp.tools = skilltool.New(skilltool.Config{Store: sp.store, Runner: c.runner, Policy: c.policy, Secrets: m.Config.Secrets,
		Executions: c.code, Now: c.now, Logger: c.log,
		Notify: func(ctx context.Context, owner, text string) { sp.notify(ctx, c, owner, text) }})
	sp.panel = &desk.Skills{Store: sp.store, Policy: c.policy, Changed: sp.tools.Changed}
	return sp
}

func (sp *skillParts) setBot(b *bot.Bot) {
	sp.mu.Lock()
	sp.bot = b
	sp.mu.Unlock()
}

// notify tells a skill's owner (a Telegram user key) in their DM.
func (sp *skillParts) notify(ctx context.Context, c *core, owner, text string) {
	sp.mu.Lock()
	b := sp.bot
	sp.mu.Unlock()
	id, ok := telegramID(owner)
	if b == nil || !ok {
		c.log.Info("skill notice not delivered (no bot or not a Telegram user)", "owner", owner)
		return
	}
	if err := b.Notify(ctx, id, text); err != nil {
		c.log.Warn("notify skill owner", "err", err)
	}
}

func telegramID(userKey string) (int64, bool) {
	rest, ok := strings.CutPrefix(userKey, kairos.ChannelTelegram+":")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}
