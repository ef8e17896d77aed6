//go:build !unix

package mcp

import (
	"log/slog"
	"os/exec"
)

// group is the server's process alone: no process groups here.
type group struct{}

func newGroup(*slog.Logger) *group { return &group{} }

func (*group) isolate(*exec.Cmd) {}

// end kills the server's process.
func (*group) end(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
