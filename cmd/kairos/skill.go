package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/bot"
	"github.com/kairos-agent/kairos/store"
	skilltool "github.com/kairos-agent/kairos/tools/skill"
)

// skillParts are the skills of `run` and `chat`: the store, the `skill`
// tool with its skill__<name> tools, and the bot once it runs (to tell an
// owner their skill was disabled, and for the /skills keyboard).
type skillParts struct {
	store *store.SkillStore
	tools *skilltool.Skills

	mu  sync.Mutex
	bot *bot.Bot
}

func newSkills(m *Main, c *core) *skillParts {
	sp := &skillParts{store: store.NewSkillStore(c.db)}
	sp.tools = skilltool.New(skilltool.Config{Store: sp.store, Runner: c.runner, Policy: c.policy, Secrets: m.Config.Secrets,
		Executions: c.code, Now: c.now, Logger: c.log,
		Notify: func(ctx context.Context, owner, text string) { sp.notify(ctx, c, owner, text) }})
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

// skillsCommand is /skills: the user's skills (and the shared ones), each
// with Disable or Enable and Rollback buttons; an operator also gets Share.
func (m *Main) skillsCommand(ctx context.Context, c *core, in *kairos.Inbound, args string) (string, error) {
	if !c.policy().Features.SelfUpdate {
		return "Skills are turned off by the operator.", nil
	}
	sp := c.skills
	if name := strings.TrimSpace(args); name != "" {
		return skillShow(ctx, sp, in.UserKey(), name)
	}
	list, err := sp.store.Skills(ctx, kairos.SkillFilter{Owner: in.UserKey(), WithShared: true})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "You have no skills yet. Ask me to build one (\"make a skill that …\").", nil
	}
	op := c.policy().IsOperator(in.UserID)
	var sb strings.Builder
	var rows [][]bot.Button
	sb.WriteString("Your skills (/skills NAME shows one):\n")
	for _, sk := range list {
		sb.WriteString(skillLine(sk) + "\n")
		if sk.Owner != in.UserKey() && !op {
			continue
		}
		id := strconv.FormatInt(sk.ID, 10)
		row := []bot.Button{{Text: "Disable " + sk.Name, Data: bot.SkillButtonPrefix + "disable:" + id}}
		if !sk.Enabled {
			row[0] = bot.Button{Text: "Enable " + sk.Name, Data: bot.SkillButtonPrefix + "enable:" + id}
		}
		if sk.Version > 1 {
			row = append(row, bot.Button{Text: "Rollback " + sk.Name, Data: bot.SkillButtonPrefix + "rollback:" + id})
		}
		if op && sk.Scope != kairos.SkillScopeShared {
			row = append(row, bot.Button{Text: "Share " + sk.Name, Data: bot.SkillButtonPrefix + "share:" + id})
		}
		rows = append(rows, row)
	}
	sp.mu.Lock()
	b := sp.bot
	sp.mu.Unlock()
	if b == nil || in.Channel != kairos.ChannelTelegram || len(rows) == 0 {
		return sb.String(), nil
	}
	if _, err := b.SendWithButtons(ctx, in, sb.String(), rows); err != nil {
		return "", err
	}
	return "", nil
}

func skillLine(sk *kairos.Skill) string {
	desc := ""
	if sk.Current != nil {
		desc = sk.Current.Description
	}
	var marks []string
	if !sk.Enabled {
		marks = append(marks, "disabled: "+orText(sk.DisabledReason, "by its owner"))
	}
	if sk.Scope == kairos.SkillScopeShared {
		marks = append(marks, "shared")
	}
	if sk.Tainted {
		marks = append(marks, "untrusted origin")
	}
	line := fmt.Sprintf("- *%s* v%d: %s (%d runs, %d failed)", escapeMD(sk.Name), sk.Version, escapeMD(desc), sk.Runs, sk.RunFailures)
	if len(marks) > 0 {
		line += " [" + strings.Join(marks, "; ") + "]"
	}
	return line
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// skillShow is /skills NAME: the code, tests and versions of one skill.
func skillShow(ctx context.Context, sp *skillParts, owner, name string) (string, error) {
	sk, err := sp.store.FindSkill(ctx, owner, strings.TrimPrefix(name, kairos.SkillToolPrefix))
	if err != nil {
		return "", err
	}
	vs, err := sp.store.SkillVersions(ctx, sk.ID)
	if err != nil {
		return "", err
	}
	var kept []string
	for _, v := range vs {
		kept = append(kept, strconv.Itoa(v.Version))
	}
	var sb strings.Builder
	sb.WriteString(skillLine(sk) + "\n")
	fmt.Fprintf(&sb, "Versions kept: %s\n", strings.Join(kept, ", "))
	if v := sk.Current; v != nil {
		fmt.Fprintf(&sb, "Risk: %s\n", orText(strings.Join(v.Risk, ", "), "none"))
		for _, t := range v.Tests {
			fmt.Fprintf(&sb, "Test %s: %s → %s\n", escapeMD(t.Name), escapeMD(kairos.Clip(string(t.Input), 200)), escapeMD(kairos.Clip(string(t.Expect), 200)))
		}
		fmt.Fprintf(&sb, "```\n%s\n```", strings.ReplaceAll(kairos.Clip(v.Code, 3000), "```", "'''"))
	}
	return sb.String(), nil
}

// skillByID finds a skill of any owner by its id (buttons and the console
// name skills by id); ENOTFOUND when it is gone.
func (sp *skillParts) skillByID(ctx context.Context, id int64) (*kairos.Skill, error) {
	list, err := sp.store.Skills(ctx, kairos.SkillFilter{})
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
	}
	return nil, kairos.Errorf(kairos.ENOTFOUND, "That skill is gone.")
}

// skillButton handles Disable, Enable, Rollback and Share. The owner or
// an operator may press them; Share is an operator's decision.
func (m *Main) skillButton(ctx context.Context, c *core, from int64, data string) (string, bool, error) {
	verb, idText, _ := strings.Cut(data, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return "", false, kairos.Errorf(kairos.EINVALID, "Unknown button.")
	}
	sp := c.skills
	sk, err := sp.skillByID(ctx, id)
	if err != nil {
		return "", false, err
	}
	op := c.policy().IsOperator(from)
	if sk.Owner != kairos.UserKey(kairos.ChannelTelegram, from) && !op {
		return "", false, kairos.Errorf(kairos.EFORBIDDEN, "Only its owner or an operator can change it.")
	}
	answer, err := applySkillVerb(ctx, sp, sk, verb, 0, op)
	if err != nil {
		return "", false, err
	}
	sp.tools.Changed()
	return answer, true, nil
}

// applySkillVerb disables, enables, rolls back (to version `to`, or the
// newest kept before the current) or shares a skill.
func applySkillVerb(ctx context.Context, sp *skillParts, sk *kairos.Skill, verb string, to int, operator bool) (string, error) {
	st := sp.store
	switch verb {
	case "disable":
		return "Disabled " + sk.Name + ".", st.SetSkillEnabled(ctx, sk.ID, false, "disabled by hand")
	case "enable":
		return "Enabled " + sk.Name + ".", st.SetSkillEnabled(ctx, sk.ID, true, "")
	case "share", "unshare":
		if !operator {
			return "", kairos.Errorf(kairos.EFORBIDDEN, "Only an operator can share a skill.")
		}
		scope := map[string]string{"share": kairos.SkillScopeShared, "unshare": kairos.SkillScopeUser}[verb]
		return "Skill " + sk.Name + " is now " + scope + ".", st.SetSkillScope(ctx, sk.ID, scope)
	case "rollback":
		vs, err := st.SkillVersions(ctx, sk.ID)
		if err != nil {
			return "", err
		}
		for _, v := range vs { // newest first
			if (to != 0 && v.Version == to && to != sk.Version) || (to == 0 && v.Version < sk.Version) {
				if err := st.SetSkillVersion(ctx, sk.ID, v.Version); err != nil {
					return "", err
				}
				return fmt.Sprintf("%s is back at version %d.", sk.Name, v.Version), nil
			}
		}
		return "", kairos.Errorf(kairos.ENOTFOUND, "No kept version of %s to roll back to.", sk.Name)
	}
	return "", kairos.Errorf(kairos.EINVALID, "Unknown button.")
}

// skillStats is the per-skill part of /codestats.
func skillStats(ctx context.Context, c *core, owner string) string {
	list, err := c.skills.store.Skills(ctx, kairos.SkillFilter{Owner: owner})
	if err != nil || len(list) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("\n\nSkills:")
	for _, sk := range list {
		fmt.Fprintf(&sb, "\n- %s: %d runs, %d failed", escapeMD(sk.Name), sk.Runs, sk.RunFailures)
	}
	return sb.String()
}
