package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
)

const tokenLong = `API tokens for /api/v1 (Authorization: Bearer <token>). create prints the
token once on stdout; only its SHA-256 is stored. Each scope covers the
ones before it: a read token lists and shows; a write token also decides
approvals, cancels schedules, forgets memories, acts on skills and runs
turns; an admin token also replaces the policy, and even then may only
narrow it (what would run or reach something new on the host, let more
people in, ask less or spend more is edited in the policy file on the
host). Each write is recorded with the token's name.`

func init() {
	register(Command{Name: "token create", Usage: "--scope read|write|admin [--name NAME]", Short: "make an API token for /api/v1 (printed once)",
		Long: tokenLong, Config: true,
		Flags: func(fs *flag.FlagSet) {
			fs.String("scope", "", "read, write or admin")
			fs.String("name", "", "a name to recognise it by (default: token-<time>)")
		},
		Run: func(ctx context.Context, m *Main, inv *Invocation) error {
			return m.tokenCreate(ctx, inv.String("scope"), inv.String("name"))
		}})
	register(Command{Name: "token list", Short: "list the API tokens as JSON (never their secrets)", Long: tokenLong, Config: true,
		Run: func(ctx context.Context, m *Main, _ *Invocation) error { return m.tokenList(ctx) }})
	register(Command{Name: "token revoke", Usage: "ID", Short: "revoke an API token at once", Long: tokenLong, Config: true,
		Args: Args{Min: 1, Max: 1},
		Run:  func(ctx context.Context, m *Main, inv *Invocation) error { return m.tokenRevoke(ctx, inv.Args[0]) }})
}

func (m *Main) tokenCreate(ctx context.Context, scope, name string) error {
	if !slices.Contains(kairos.Scopes, scope) {
		return usagef("--scope must be read, write or admin")
	}
	if name == "" {
		name = "token-" + time.Now().UTC().Format("20060102-150405")
	}
	db, err := m.openStore(ctx, m.logger())
	if err != nil {
		return err
	}
	secret := kairos.NewSecret("kat_")
	t := &kairos.APIToken{ID: kairos.NewID()[:8], Name: name, Scope: scope}
	if err := store.NewAPIStore(db).CreateAPIToken(ctx, t, kairos.HashSecret(secret)); err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "token %s (%s, scope %s) created; it is shown once:\n", t.ID, t.Name, t.Scope)
	fmt.Fprintln(m.Stdout, secret)
	return nil
}

func (m *Main) tokenList(ctx context.Context) error {
	if m.saidNoDatabase() {
		_, err := fmt.Fprintln(m.Stdout, "[]")
		return err
	}
	db, err := m.openStoreRO(ctx, m.logger())
	if err != nil {
		return err
	}
	ts, err := store.NewAPIStore(db).APITokens(ctx)
	if err != nil {
		return err
	}
	type row struct {
		ID         string     `json:"id"`
		Name       string     `json:"name"`
		Scope      string     `json:"scope"`
		CreatedAt  time.Time  `json:"created_at"`
		LastUsedAt *time.Time `json:"last_used_at,omitempty"`
		RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	}
	out := make([]row, len(ts))
	for i, t := range ts {
		out[i] = row{ID: t.ID, Name: t.Name, Scope: t.Scope, CreatedAt: t.CreatedAt}
		if !t.LastUsedAt.IsZero() {
			out[i].LastUsedAt = &t.LastUsedAt
		}
		if !t.RevokedAt.IsZero() {
			out[i].RevokedAt = &t.RevokedAt
		}
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (m *Main) tokenRevoke(ctx context.Context, id string) error {
	if m.noDatabase() != "" {
		return m.nothingToChange(fmt.Sprintf("no token has the id %q", id))
	}
	db, err := m.openStore(ctx, m.logger())
	if err != nil {
		return err
	}
	if err := store.NewAPIStore(db).RevokeAPIToken(ctx, id, time.Now()); err != nil {
		if kairos.ErrorCode(err) == kairos.ENOTFOUND {
			return fmt.Errorf("%s", kairos.ErrorMessage(err))
		}
		return err
	}
	fmt.Fprintf(m.Stdout, "token %s revoked\n", id)
	return nil
}
