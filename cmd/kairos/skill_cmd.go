package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/sandbox"
	"github.com/kairos-agent/kairos/store"
	skilltool "github.com/kairos-agent/kairos/tools/skill"
)

// `kairos skill …`: the approved skills from the host (the operator's
// command line is the operator's approval for rollback, share and import).
func init() {
	user := func(fs *flag.FlagSet) {
		fs.Int64("user", 0, "the owner's Telegram user id (needed when two users have a skill of that name)")
	}
	register(Command{Name: "skill list", Usage: "[--user ID]", Short: "the approved skills as JSON",
		Long: "Prints [{name, version, owner, scope: \"user\"|\"shared\", enabled, created_at}].", Flags: user, Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error { return m.skillList(ctx, inv.Int64("user")) }})
	register(Command{Name: "skill show", Usage: "NAME [--user ID]", Short: "one skill as JSON: code, tests, versions",
		Flags: user, Args: Args{Min: 1, Max: 1}, Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.skillShow(ctx, inv.Args[0], inv.Int64("user"))
		}})
	register(Command{Name: "skill rollback", Usage: "NAME [--to N] [--user ID]", Short: "make a kept version current (the previous one by default)",
		Flags: func(fs *flag.FlagSet) { user(fs); fs.Int64("to", 0, "the version to return to") }, Args: Args{Min: 1, Max: 1}, Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.skillVerb(ctx, inv.Args[0], inv.Int64("user"), "rollback", int(inv.Int64("to")))
		}})
	for _, v := range []struct{ verb, short string }{
		{"disable", "stop offering a skill (kept with its versions)"}, {"enable", "offer a disabled skill again"},
		{"share", "offer a skill to every user (an operator's decision)"}, {"unshare", "offer a shared skill to its owner only again"},
	} {
		register(Command{Name: "skill " + v.verb, Usage: "NAME [--user ID]", Short: v.short, Flags: user, Args: Args{Min: 1, Max: 1}, Config: true,
			Run: func(ctx context.Context, m *Main, inv *Invocation) error {
				return m.skillVerb(ctx, inv.Args[0], inv.Int64("user"), v.verb, 0)
			}})
	}
	register(Command{Name: "skill export", Usage: "NAME [FILE] [--user ID] [--force]", Short: "write a skill's current version to one JSON file (stdout without FILE)",
		Flags: func(fs *flag.FlagSet) { user(fs); fs.Bool("force", false, "overwrite FILE") }, Args: Args{Min: 1, Max: 2}, Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.skillExport(ctx, inv.Args[0], argOr(inv, 1, ""), inv.Int64("user"), inv.Bool("force"))
		}})
	register(Command{Name: "skill import", Usage: "FILE --user ID [--yes]", Short: "create a skill from an exported file: its tests run, then you approve",
		Long: "An import is a create: the tests run in the sandbox (a failing test stops it), the whole code, the tests and their results are shown, and you approve (or --yes). The skill is marked as of untrusted origin.",
		Flags: func(fs *flag.FlagSet) {
			fs.Int64("user", 0, "the new owner's Telegram user id (required)")
			fs.Bool("yes", false, "approve without asking")
		}, Args: Args{Min: 1, Max: 1}, Config: true,
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.skillImport(ctx, inv.Args[0], inv.Int64("user"), inv.Bool("yes"))
		}})
}

// skillStore opens the database: read-only (no folder, no migration)
// for the commands that only read. For a read, a database without skills
// (none yet, or one from before the skills tables) is a nil store: no
// skills, as `kairos usage` says [] of a database without its data.
func (m *Main) skillStore(ctx context.Context, write bool) (*store.SkillStore, error) {
	if write {
		db, err := m.openStore(ctx, m.logger())
		if err != nil {
			return nil, err
		}
		return store.NewSkillStore(db), nil
	}
	if m.saidNoDatabase() {
		return nil, nil
	}
	db, err := m.openStoreRO(ctx, m.logger())
	if kairos.ErrorCode(err) == kairos.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !db.Gorm().WithContext(ctx).Migrator().HasTable("skills") {
		return nil, nil
	}
	return store.NewSkillStore(db), nil
}

// openSkill opens the skill store (for writing when write is set) and
// finds the skill the command names.
func (m *Main) openSkill(ctx context.Context, name string, user int64, write bool) (*store.SkillStore, *kairos.Skill, error) {
	st, err := m.skillStore(ctx, write)
	if err != nil {
		return nil, nil, err
	}
	sk, err := findSkill(ctx, st, name, user)
	if err != nil {
		return nil, nil, err
	}
	return st, sk, nil
}

// findSkill finds a skill by name (and owner when user is set).
func findSkill(ctx context.Context, st *store.SkillStore, name string, user int64) (*kairos.Skill, error) {
	name = strings.TrimPrefix(name, kairos.SkillToolPrefix)
	if st == nil {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no skill named %q", name)
	}
	if user != 0 {
		return st.FindSkill(ctx, kairos.UserKey(kairos.ChannelTelegram, user), name)
	}
	all, err := st.Skills(ctx, kairos.SkillFilter{})
	if err != nil {
		return nil, err
	}
	var found []*kairos.Skill
	for _, sk := range all {
		if sk.Name == name {
			found = append(found, sk)
		}
	}
	switch len(found) {
	case 0:
		return nil, kairos.Errorf(kairos.ENOTFOUND, "no skill named %q", name)
	case 1:
		return found[0], nil
	}
	return nil, usagef("%d users have a skill named %q: say whose with --user ID", len(found), name)
}

func (m *Main) skillList(ctx context.Context, user int64) error {
	st, err := m.skillStore(ctx, false)
	if err != nil {
		return err
	}
	if st == nil {
		_, err := fmt.Fprintln(m.Stdout, "[]")
		return err
	}
	f := kairos.SkillFilter{}
	if user != 0 {
		f.Owner = kairos.UserKey(kairos.ChannelTelegram, user)
	}
	list, err := st.Skills(ctx, f)
	if err != nil {
		return err
	}
	type row struct {
		Name      string `json:"name"`
		Version   int    `json:"version"`
		Owner     string `json:"owner"`
		Scope     string `json:"scope"`
		Enabled   bool   `json:"enabled"`
		CreatedAt string `json:"created_at"`
	}
	out := []row{}
	for _, sk := range list {
		out = append(out, row{sk.Name, sk.Version, sk.Owner, sk.Scope, sk.Enabled, sk.CreatedAt.Format(time.RFC3339)})
	}
	return json.NewEncoder(m.Stdout).Encode(out)
}

func (m *Main) skillShow(ctx context.Context, name string, user int64) error {
	st, sk, err := m.openSkill(ctx, name, user, false)
	if err != nil {
		return err
	}
	vs, err := st.SkillVersions(ctx, sk.ID)
	if err != nil {
		return err
	}
	out := map[string]any{"name": sk.Name, "version": sk.Version, "owner": sk.Owner, "scope": sk.Scope, "enabled": sk.Enabled,
		"disabled_reason": sk.DisabledReason, "tainted": sk.Tainted, "taint_source": sk.TaintSource, "runs": sk.Runs,
		"run_failures": sk.RunFailures, "created_at": sk.CreatedAt.Format(time.RFC3339), "current": sk.Current, "versions": vs}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(m.Stdout, "%s\n", b)
	return err
}

func (m *Main) skillVerb(ctx context.Context, name string, user int64, verb string, to int) error {
	st, sk, err := m.openSkill(ctx, name, user, true)
	if err != nil {
		return err
	}
	msg, err := desk.ApplySkillVerb(ctx, st, sk, verb, to, true)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(m.Stdout, msg)
	return err
}

func (m *Main) skillExport(ctx context.Context, name, file string, user int64, force bool) error {
	st, sk, err := m.openSkill(ctx, name, user, false)
	if err != nil {
		return err
	}
	data, err := skilltool.New(skilltool.Config{Store: st}).Export(ctx, sk)
	if err != nil {
		return err
	}
	if file == "" {
		_, err = m.Stdout.Write(data)
		return err
	}
	if _, err := os.Stat(file); err == nil && !force {
		return usagef("%s exists; use --force to overwrite it", file)
	}
	if err := writeFileAtomic(filepath.Clean(file), data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	_, err = fmt.Fprintf(m.Stdout, "exported %s v%d to %s\n", sk.Name, sk.Version, file)
	return err
}

func (m *Main) skillImport(ctx context.Context, file string, user int64, yes bool) error {
	if user == 0 {
		return usagef("--user ID is required: the skill belongs to a user")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	res, err := policy.LoadFile(m.Config.PolicyPath)
	if err != nil {
		return usagef("policy %s:\n%v", m.Config.PolicyPath, err)
	}
	st, err := m.skillStore(ctx, true)
	if err != nil {
		return err
	}
	runner := m.Cells
	if runner == nil {
		r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(m.Config.DataDir, "wazero-cache"), PoolSize: -1})
		if err != nil {
			return err
		}
		m.onClose(func() error { return r.Close(context.Background()) })
		runner = r
	}
	pol := res.Policy
	sk := skilltool.New(skilltool.Config{Store: st, Runner: runner, Policy: func() *kairos.Policy { return pol }, Secrets: m.Config.Secrets})
	owner := kairos.UserKey(kairos.ChannelTelegram, user)
	out, err := sk.Import(ctx, owner, data, func(ctx context.Context, detail string) (bool, string, error) {
		fmt.Fprintln(m.Stdout, detail)
		if yes {
			return true, "cli", nil
		}
		fmt.Fprint(m.Stdout, "Approve this skill? [y/N] ")
		line, _ := bufio.NewReader(m.Stdin).ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "y"), "cli", nil
	})
	if out != nil && out.Skill == nil && len(out.TestResults) > 0 && kairos.ErrorCode(err) == kairos.EINVALID {
		fmt.Fprintln(m.Stdout, out.Detail)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(m.Stdout, "imported %s v%d for %s\n", out.Skill.Name, out.Skill.Version, owner+" ("+strconv.FormatInt(user, 10)+")")
	return err
}
