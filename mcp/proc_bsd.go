//go:build unix && !linux

package mcp

import "syscall"

// dieWithParent does nothing: there is no Pdeathsig here; the group's
// guard (proc_group.go) ends the server when Kairos dies.
func dieWithParent(*syscall.SysProcAttr) {}
