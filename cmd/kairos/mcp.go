package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/mcp"
	"github.com/kairos-agent/kairos/policy"
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

// addMCPCommands adds /tools (operators): the tools offered, the MCP
// servers with their state and their tools with impact.
func (m *Main) addMCPCommands(c *core, t *desk.Table) {
	t.Add(desk.Command{Name: "tools", Description: "The tools and MCP servers (operators)", Operators: true, Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
		return toolsText(c), nil
	}})
}

func toolsText(c *core) string {
	tools, status := toolState(c)
	var builtin []string
	for _, t := range tools {
		if t.Source == "built-in" {
			builtin = append(builtin, t.Name)
		}
	}
	return "```\nBuilt-in: " + strings.Join(builtin, ", ") + "\n\n" + mcp.FormatStatus(status) + "\n```"
}

// toolInfo is one tool the model is offered, as /tools and the console
// show it.
type toolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"` // built-in or mcp
}

// toolState is the tools the policy in force offers and the MCP servers'
// state (the /tools command, the console and GET /api/v1/tools).
func toolState(c *core) ([]toolInfo, []mcp.ServerStatus) {
	pol := c.policy()
	var tools []toolInfo
	for _, t := range c.registry.Tools(pol) {
		sp := t.Spec()
		src := "built-in"
		if _, ext := t.(kairos.ExternalTool); ext {
			src = "mcp"
		}
		tools = append(tools, toolInfo{Name: sp.Name, Description: sp.Description, Source: src})
	}
	c.mu.Lock()
	mgr := c.mcp
	c.mu.Unlock()
	status := []mcp.ServerStatus{}
	if mgr != nil {
		status = mgr.Status(pol)
	}
	return tools, status
}

// runMCP is `kairos mcp check [FILE]`: it connects to every server the
// policy lists, prints what each offers, and exits 1 when one failed.
func (m *Main) runMCP(ctx context.Context, path string) error {
	res, err := policy.LoadFile(path)
	if err != nil {
		fmt.Fprintln(m.Stdout, err.Error())
		return &quietError{code: 2}
	}
	if len(res.Policy.MCP.Servers) == 0 {
		fmt.Fprintf(m.Stdout, "%s: no MCP servers (policy section mcp)\n", path)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	reports := mcp.Check(ctx, res.Policy, mcp.Config{Secrets: m.Config.Secrets, Logger: m.logger(), Version: kairos.Version})
	failed := 0
	for _, r := range reports {
		switch {
		case r.Disabled:
			fmt.Fprintf(m.Stdout, "%s (%s): disabled\n", r.Name, r.Transport)
			continue
		case r.Error != "":
			failed++
			fmt.Fprintf(m.Stdout, "%s (%s): FAILED: %s\n", r.Name, r.Transport, r.Error)
			continue
		}
		offered := 0
		for _, t := range r.Tools {
			if t.Allowed && t.Skipped == "" {
				offered++
			}
		}
		fmt.Fprintf(m.Stdout, "%s (%s): ok, %d tools, %d allowed\n", r.Name, r.Transport, len(r.Tools), offered)
		for _, t := range r.Tools {
			state := "allowed"
			switch {
			case t.Skipped != "":
				state = "skipped: " + t.Skipped
			case !t.Allowed:
				state = "not allowed"
			}
			fmt.Fprintf(m.Stdout, "  %s  %s  (%s)\n", t.Name, t.Impact, state)
			if t.Skipped == "" {
				fmt.Fprintf(m.Stdout, "    %s\n    parameters: %s\n", t.Description, t.Parameters)
			}
		}
	}
	if failed > 0 {
		return &quietError{code: 1}
	}
	return nil
}
