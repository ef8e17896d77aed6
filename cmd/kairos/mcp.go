package main

import (
	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/mcp"
)

// openMCP starts the MCP servers of the policy in force; policy reloads
// reach them through applyMCP.
func (c *core) openMCP(m *Main) *mcp.Manager {
	mgr := mcp.New(mcp.Config{Secrets: m.Config.Secrets, Logger: c.log, Observer: c.metrics, Version: kairos.Version})
	m.onClose(mgr.Close)
	c.mu.Lock()
	c.mcp = mgr
	c.mu.Unlock()
	mgr.Apply(c.policy())
	return mgr
}

// applyMCP connects and disconnects servers after a policy reload.
func (c *core) applyMCP(p *kairos.Policy) {
	c.mu.Lock()
	mgr := c.mcp
	c.mu.Unlock()
	if mgr != nil {
		mgr.Apply(p)
	}
}
