//go:build unix

package mcp

import (
	"log/slog"
	"os"
	"os/exec"
	"syscall"
)

// group is the process group a stdio server runs in, led by a guard: a
// /bin/sh that waits for the end of a pipe whose other end only Kairos
// holds, then kills its whole group ("kill -KILL 0"). However Kairos ends,
// SIGKILL included, the kernel closes that end, so the server and
// everything it started end too; Pdeathsig (Linux) reaches only the
// server itself. Only a process that leaves the group (setsid) escapes.
//
// The guard is reaped only in end, after the group was killed: until
// then its pid, which is the group's id, cannot be reused, so the kill
// never reaches another group.
type group struct {
	guard *exec.Cmd
	hold  *os.File // Kairos's end of the guard's pipe; never written
}

// guardScript reads its stdin until it ends, then kills its group.
const guardScript = "read x; kill -KILL 0"

// newGroup starts a guard. Without one (no /bin/sh) the server leads a
// group of its own, which end still kills, but a killed Kairos leaves
// what the server started.
func newGroup(log *slog.Logger) *group {
	r, w, err := os.Pipe()
	if err != nil {
		log.Warn("mcp server group has no guard", "err", err)
		return &group{}
	}
	defer r.Close()
	g := exec.Command("/bin/sh", "-c", guardScript)
	g.Stdin, g.Env = r, []string{}
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.Start(); err != nil {
		w.Close()
		log.Warn("mcp server group has no guard", "err", err)
		return &group{}
	}
	return &group{guard: g, hold: w}
}

// isolate puts cmd in the group (a group of its own without a guard).
func (g *group) isolate(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if g.guard != nil {
		attr.Pgid = g.guard.Process.Pid
	}
	dieWithParent(attr)
	cmd.SysProcAttr = attr
}

// end kills every process of the group, then reaps the guard. cmd is the
// server's process (leading the group when there is no guard).
func (g *group) end(cmd *exec.Cmd) {
	switch {
	case g.guard != nil:
		_ = syscall.Kill(-g.guard.Process.Pid, syscall.SIGKILL)
		g.hold.Close()
		_ = g.guard.Wait()
	case cmd != nil && cmd.Process != nil:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
