package main

import (
	"context"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/store"
)

// grantDesk is the desk's side of the standing approvals: /grants, its
// buttons, the API's and the console's lists and revokes.
func (c *core) newGrantDesk() *desk.Grants {
	return &desk.Grants{Store: c.grants, Skills: c.skills.store, Tools: c.registry, Policy: c.policy,
		Zone: userZone(store.NewClockStore(c.db), c.now), Logger: c.log}
}

// Grants is web.Backend's list of standing approvals.
func (be *consoleBackend) Grants(ctx context.Context, userKey string) ([]*kairos.Grant, error) {
	return be.c.grantDesk.Live(ctx, kairos.GrantFilter{UserKey: userKey})
}

// RevokeGrant is web.Backend's revoke (the API's DELETE, the console's
// button).
func (be *consoleBackend) RevokeGrant(ctx context.Context, id, by string) error {
	return be.c.grantDesk.Revoke(ctx, id, by)
}
