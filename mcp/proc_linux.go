package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio server in a process group of its own, so that
// closing it can end everything it started, and asks the kernel to kill
// it when Kairos dies (Pdeathsig), so that a SIGKILLed Kairos leaves no
// server behind even when the server ignores the end of its stdin. The
// signal follows the OS thread that started the process; Go ends threads
// only when a goroutine locked to one exits, which Kairos's process start
// never does.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group that pid leads.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
