package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kairos-agent/kairos"
)

// Admitting yourself: on a first run with no operator (none in the
// policy, none in the database), `kairos run` logs a single-use claim
// code and writes it to KAIROS_DATA_DIR/operator-claim-code (0600).
// Whoever sends `/start <code>` to the bot in a private chat becomes an
// operator, stored in the database as a grant with role operator (what
// `kairos access list` shows). Only the code's SHA-256 is stored.

const claimFile = "operator-claim-code"

// operators merges the database's operators into the policy in force:
// everything that asks Policy().IsOperator sees them.
type operators struct {
	mu     sync.Mutex
	ids    []int64
	base   *kairos.Policy // the policy the merged copy was made from
	merged *kairos.Policy
}

// set replaces the database's operators and reports whether they changed.
func (o *operators) set(ids []int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if slices.Equal(o.ids, ids) {
		return false
	}
	o.ids, o.base, o.merged = ids, nil, nil
	return true
}

// operatorRefresh is how often a running Kairos reads the database's
// operators again, so that one claimed on another replica, or revoked
// with `kairos access deny`, counts here without a restart.
const operatorRefresh = 5 * time.Second

// watchOperators re-reads the database's operators until ctx ends; a
// failed read keeps the last known set and is logged once until a read
// succeeds again.
func (m *Main) watchOperators(ctx context.Context, c *core) {
	t := time.NewTicker(operatorRefresh)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := c.updates.Operators(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				c.log.Warn("re-read operators: keeping the last known ones", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		if c.operators.set(ids) {
			c.log.Info("operators changed in the database", "count", len(ids))
		}
	}
}

func (o *operators) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ids)
}

// wrap returns a policy source that adds the database's operators; the
// merged copy is rebuilt only when the policy or the operators change.
func (o *operators) wrap(src func() *kairos.Policy) func() *kairos.Policy {
	return func() *kairos.Policy {
		p := src()
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.ids) == 0 {
			return p
		}
		if o.base != p {
			cp := *p
			cp.Access.Operators = slices.Clone(p.Access.Operators)
			for _, id := range o.ids {
				if !slices.Contains(cp.Access.Operators, id) {
					cp.Access.Operators = append(cp.Access.Operators, id)
				}
			}
			o.base, o.merged = p, &cp
		}
		return o.merged
	}
}

func claimHash(code string) string {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(sum[:])
}

// offerClaim runs at start: with no operator anywhere it makes (or
// reuses) a claim code and says how to use it in one log line; with one,
// it drops a leftover claim.
func (m *Main) offerClaim(ctx context.Context, c *core) error {
	path := filepath.Join(m.Config.DataDir, claimFile)
	if len(c.policy().Access.Operators) > 0 {
		if pending, _ := c.updates.OperatorClaim(ctx); pending != "" {
			if err := c.updates.ClearOperatorClaim(ctx); err != nil {
				return err
			}
		}
		os.Remove(path)
		return nil
	}
	code, err := m.claimCode(ctx, c, path)
	if err != nil {
		return err
	}
	p := c.policy()
	reach := "only users admitted with `kairos access allow` or pairing can talk to the bot meanwhile"
	if len(p.Access.AllowedUsers) == 0 {
		if grants, err := c.updates.AccessGrants(ctx); err == nil && len(grants) == 0 {
			reach = "until then no one can talk to the bot"
		}
	}
	c.log.Warn(fmt.Sprintf("no operator yet: send /start %s to your bot on Telegram to become its operator (single use; also in %s); %s", code, path, reach))
	return nil
}

// claimCode returns the pending code from the data folder when it is the
// one the database expects, or makes a new one.
func (m *Main) claimCode(ctx context.Context, c *core, path string) (string, error) {
	pending, err := c.updates.OperatorClaim(ctx)
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(path); err == nil && pending != "" && claimHash(string(b)) == pending {
		return strings.TrimSpace(string(b)), nil
	}
	raw := make([]byte, 10)
	rand.Read(raw)
	s := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw)
	code := s[:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
	if err := os.MkdirAll(m.Config.DataDir, 0o700); err != nil {
		return "", fmt.Errorf("claim code: %w", err)
	}
	if err := writeFileAtomic(path, []byte(code+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("claim code: %w", err)
	}
	if err := c.updates.SetOperatorClaim(ctx, claimHash(code)); err != nil {
		return "", err
	}
	return code, nil
}

// claim is the bot's Claim hook: `/start <code>`.
func (m *Main) claim(ctx context.Context, c *core, userID int64, code string) (string, bool) {
	pending, err := c.updates.OperatorClaim(ctx)
	if err != nil || pending == "" {
		return "", false
	}
	ok, err := c.updates.ClaimOperator(ctx, userID, claimHash(code))
	if err != nil {
		c.log.Error("operator claim failed", "user_id", userID, "err", err)
		return "Sorry, that did not work; try again in a moment.", true
	}
	if !ok {
		c.log.Warn("operator claim refused: wrong code", "user_id", userID)
		return "That claim code is not valid.", true
	}
	ids, err := c.updates.Operators(ctx)
	if err != nil {
		c.log.Error("reload operators", "err", err)
	}
	c.operators.set(ids)
	if err := os.Remove(filepath.Join(m.Config.DataDir, claimFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.log.Warn("remove claim code file", "err", err)
	}
	c.log.Info("operator claimed the bot", "user_id", userID)
	return "Welcome! You are now this bot's operator (stored in its database; `kairos access list` shows it). " +
		"Send /help for the commands, or just write to me. To let someone else in, ask them for their pairing code and send /pair <code>.", true
}
