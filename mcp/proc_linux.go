package mcp

import "syscall"

// dieWithParent asks the kernel to kill the server when Kairos dies
// (Pdeathsig), even when the server ignores the end of its stdin. The
// signal follows the OS thread that started the process; Go ends threads
// only when a goroutine locked to one exits, which Kairos's process start
// never does.
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
