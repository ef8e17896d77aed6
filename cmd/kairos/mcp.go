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
	"github.com/kairos-agent/kairos/tools"
	"github.com/kairos-agent/kairos/web"
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
	var builtin []string
	for _, t := range toolsView(c).Tools {
		if t.Server == "built-in" && t.Enabled {
			builtin = append(builtin, t.Name)
		}
	}
	return "```\nBuilt-in: " + strings.Join(builtin, ", ") + "\n\n" + mcp.FormatStatus(mcpStatus(c)) + "\n```"
}

// mcpStatus is the MCP servers' state under the policy in force.
func mcpStatus(c *core) []mcp.ServerStatus {
	c.mu.Lock()
	mgr := c.mcp
	c.mu.Unlock()
	if mgr == nil {
		return []mcp.ServerStatus{}
	}
	return mgr.Status(c.policy())
}

// toolsView is every tool the model can be offered (/tools and the
// console): the built-in ones, disabled ones too with the key that
// removes them, then those the registry offers (skills, MCP tools), then
// the MCP servers' tools it does not offer and why.
func toolsView(c *core) *web.ToolsView {
	pol := c.policy()
	v := &web.ToolsView{Tools: []web.ToolRow{}, MCP: []web.MCPServerRow{}}
	seen := map[string]bool{}
	for _, t := range c.registry.Builtin() {
		sp := t.Spec()
		access, asks := tools.Access(pol, tools.ActionsOf(sp.Name))
		why := tools.AbsentWhy(pol, sp.Name)
		v.Tools = append(v.Tools, web.ToolRow{Name: sp.Name, Server: "built-in", Access: access, Asks: strings.Join(asks, ", "),
			Enabled: why == "", Why: why, Description: sp.Description})
		seen[sp.Name] = true
	}
	for _, t := range c.registry.Tools(pol) {
		sp := t.Spec()
		if seen[sp.Name] {
			continue
		}
		seen[sp.Name] = true
		row := web.ToolRow{Name: sp.Name, Server: "skill", Enabled: true, Description: sp.Description}
		action := kairos.ActionSkillRun
		if ext, ok := t.(kairos.ExternalTool); ok {
			row.Server, action = ext.Server(), ext.OfferedAction()
		}
		access, asks := tools.Access(pol, []string{action})
		row.Access, row.Asks = access, strings.Join(asks, ", ")
		v.Tools = append(v.Tools, row)
	}
	for _, s := range mcpStatus(c) {
		v.MCP = append(v.MCP, web.MCPServerRow{Name: s.Name, Transport: s.Transport, State: s.State, Error: s.Error, Restarts: s.Restarts, Tools: len(s.Tools)})
		for _, t := range s.Tools {
			if seen[t.Name] {
				continue
			}
			why := map[bool]string{true: "over mcp.max_tools", false: "not in the server's allow-list"}[t.Allowed]
			if t.Skipped != "" {
				why = t.Skipped
			}
			v.Tools = append(v.Tools, web.ToolRow{Name: t.Name, Server: s.Name, Access: t.Impact, Why: why, Description: "(" + t.Remote + " on " + s.Name + ")"})
		}
	}
	return v
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
