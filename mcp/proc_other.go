//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func isolate(*exec.Cmd) {}

// killGroup kills the process (no process groups here).
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
