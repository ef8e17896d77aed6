package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/policy"
	"github.com/kairos-agent/kairos/store"
)

// accessGrant is one reason a user may talk to the agent.
type accessGrant struct {
	id     int64
	role   string // operator | allowed
	source string
}

// accessOpts are the flags of `access allow` (--operator) and `access
// deny` (--force).
type accessOpts struct{ operator, force bool }

// runAccess is `kairos access allow|deny ID` and `kairos access list`.
// Users come from two places: the policy file (access.operators and
// access.allowed_users) and the database (`kairos access allow` and
// operators' /pair). This command changes only the database and says so
// when asked to change the file.
func (m *Main) runAccess(ctx context.Context, args []string, opt accessOpts) error {
	if len(args) == 0 || (args[0] == "list") != (len(args) == 1) || (args[0] != "list" && len(args) != 2) {
		return usagef("usage: kairos access allow|deny ID | list")
	}
	res, err := policy.LoadFile(m.Config.PolicyPath)
	if err != nil {
		return usagef("policy %s:\n%v", m.Config.PolicyPath, err)
	}
	if args[0] == "list" {
		// Read-only: no database yet means no database grants.
		if m.saidNoDatabase() {
			return m.listAccess(ctx, nil, res.Policy)
		}
		db, err := m.openStoreRO(ctx, m.logger())
		if kairos.ErrorCode(err) == kairos.ENOTFOUND {
			return m.listAccess(ctx, nil, res.Policy)
		} else if err != nil {
			return err
		}
		return m.listAccess(ctx, store.NewUpdateLog(db), res.Policy)
	}
	id, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || id <= 0 {
		return usagef("ID must be a Telegram user id (a positive number), not %q", args[1])
	}
	if args[0] == "deny" && m.noDatabase() != "" {
		// Nothing in a database that does not exist: say what admits
		// the user, create nothing.
		return m.denyAccess(ctx, nil, res.Policy, id, opt.force)
	}
	db, err := m.openStore(ctx, m.logger())
	if err != nil {
		return err
	}
	l := store.NewUpdateLog(db)
	switch args[0] {
	case "allow":
		return m.allowAccess(ctx, l, res.Policy, id, opt.operator)
	case "deny":
		return m.denyAccess(ctx, l, res.Policy, id, opt.force)
	}
	return usagef("usage: kairos access allow|deny ID | list")
}

// policyGrant names the policy key that admits id, or "".
func (m *Main) policyGrant(p *kairos.Policy, id int64) string {
	switch {
	case slices.Contains(p.Access.Operators, id):
		return fmt.Sprintf("the policy file %s (access.operators)", m.Config.PolicyPath)
	case slices.Contains(p.Access.AllowedUsers, id):
		return fmt.Sprintf("the policy file %s (access.allowed_users)", m.Config.PolicyPath)
	}
	return ""
}

func (m *Main) allowAccess(ctx context.Context, l *store.UpdateLog, p *kairos.Policy, id int64, operator bool) error {
	if operator {
		if slices.Contains(p.Access.Operators, id) {
			fmt.Fprintf(m.Stdout, "user %d: already an operator by %s; nothing changed\n", id, m.policyGrant(p, id))
			return nil
		}
		if err := l.MakeOperator(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "user %d: operator (database grant; a running bot sees it within seconds; `kairos access deny %d` removes it)\n", id, id)
		return nil
	}
	if src := m.policyGrant(p, id); src != "" {
		fmt.Fprintf(m.Stdout, "user %d: already allowed by %s; nothing changed\n", id, src)
		return nil
	}
	if err := l.GrantAccess(ctx, id, 0); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "user %d: allowed (database grant; `kairos access deny %d` removes it)\n", id, id)
	return nil
}

// denyAccess removes id's database grant (l is nil when there is no
// database yet). The last operator stays unless force: without one,
// nobody can pair users or read /policy until someone is made operator
// on the host.
func (m *Main) denyAccess(ctx context.Context, l *store.UpdateLog, p *kairos.Policy, id int64, force bool) error {
	var dbOps []int64
	inDB := false
	if l != nil {
		var err error
		if inDB, err = l.HasAccess(ctx, id); err != nil {
			return err
		}
		if dbOps, err = l.Operators(ctx); err != nil {
			return err
		}
	}
	src := m.policyGrant(p, id)
	if inDB && src == "" && !force && slices.Equal(dbOps, []int64{id}) && len(p.Access.Operators) == 0 {
		return fmt.Errorf("user %d is the last operator: without one nobody can pair new users or read /policy; "+
			"nothing changed (--force removes them anyway; `kairos access allow ID --operator` makes another operator first)", id)
	}
	if inDB {
		if err := l.RevokeAccess(ctx, id); err != nil {
			return err
		}
	}
	switch {
	case src != "" && inDB:
		return fmt.Errorf("user %d: the database grant is removed, but %s still allows them; this command cannot change the policy file: remove the id there", id, src)
	case src != "":
		return fmt.Errorf("user %d is allowed by %s, not by the database; this command cannot remove a policy grant: remove the id from the file", id, src)
	case !inDB && l == nil:
		return m.nothingToChange(fmt.Sprintf("user %d is not allowed (the policy file does not admit them)", id))
	case !inDB:
		return fmt.Errorf("user %d is not allowed now (neither the policy file nor the database admits them); nothing to remove", id)
	}
	fmt.Fprintf(m.Stdout, "user %d: removed (their database grant is gone; they get a pairing reply from now on)\n", id)
	return nil
}

// listAccess prints one line per grant: id, role and where it comes from.
func (m *Main) listAccess(ctx context.Context, l *store.UpdateLog, p *kairos.Policy) error {
	var grants []accessGrant
	for _, id := range p.Access.Operators {
		grants = append(grants, accessGrant{id, "operator", fmt.Sprintf("policy file %s (access.operators)", m.Config.PolicyPath)})
	}
	for _, id := range p.Access.AllowedUsers {
		grants = append(grants, accessGrant{id, "allowed", fmt.Sprintf("policy file %s (access.allowed_users)", m.Config.PolicyPath)})
	}
	var rows []store.AccessGrant
	if l != nil {
		var err error
		if rows, err = l.AccessGrants(ctx); err != nil {
			return err
		}
	}
	for _, r := range rows {
		src := fmt.Sprintf("database (kairos access allow, %s)", r.CreatedAt.Format("2006-01-02"))
		if r.GrantedBy != 0 {
			src = fmt.Sprintf("pairing (approved by operator %d, %s)", r.GrantedBy, r.CreatedAt.Format("2006-01-02"))
		}
		role := "allowed"
		if r.Role == store.RoleOperator {
			role, src = "operator", fmt.Sprintf("database (claimed with /start <code>, %s)", r.CreatedAt.Format("2006-01-02"))
		}
		grants = append(grants, accessGrant{r.UserID, role, src})
	}
	if len(grants) == 0 {
		fmt.Fprintln(m.Stdout, "no users are allowed: only pairing can admit someone (access.pairing)")
		return nil
	}
	for _, g := range grants {
		fmt.Fprintf(m.Stdout, "%d\t%s\t%s\n", g.id, g.role, g.source)
	}
	return nil
}
