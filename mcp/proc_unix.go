//go:build unix && !linux

package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio server in a process group of its own, so that
// closing it can end everything it started. (No Pdeathsig outside Linux:
// a SIGKILLed Kairos leaves a server that ignores its stdin's end.)
func isolate(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group that pid leads.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
