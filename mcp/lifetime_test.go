//go:build linux

package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/testkit"
	"github.com/kairos-agent/kairos/internal/testkit/mcpserver"
	"github.com/kairos-agent/kairos/mcp"
)

// runHelpers turns the test binary into one of the processes these tests
// need, when the environment asks for it (it never returns then).
func runHelpers() {
	pids := os.Getenv("KAIROS_MCP_TEST_PIDS")
	switch {
	case os.Getenv("KAIROS_MCP_TEST_SLEEPER") != "":
		// A process the server started: ignores SIGTERM, never ends.
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		appendPid(pids, "sleeper")
		for {
			time.Sleep(time.Hour)
		}
	case os.Getenv("KAIROS_MCP_TEST_STUBBORN") != "":
		// A stdio MCP server that ignores its stdin's end and SIGTERM, and
		// starts a process of its own.
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		exe, _ := os.Executable()
		child := exec.Command(exe)
		child.Env = []string{"KAIROS_MCP_TEST_SLEEPER=1", "KAIROS_MCP_TEST_PIDS=" + pids}
		child.Start()
		appendPid(pids, "server")
		mcpserver.New("stubborn").ServeStdio(context.Background())
		for {
			time.Sleep(time.Hour) // stdin ended: stay anyway
		}
	case os.Getenv("KAIROS_MCP_TEST_HOST") != "":
		// A Kairos stand-in: supervises one stubborn server, says when it
		// is ready, then waits to be killed.
		m := mcp.New(mcp.Config{ConnectTimeout: 10 * time.Second})
		p := policyWith(map[string]kairos.MCPServer{"stubborn": stubbornServer(pids)})
		m.Apply(p)
		// No deadline of its own: the test kills this process when the
		// test's deadline ends first.
		if err := m.Wait(context.Background(), p, func(ss []mcp.ServerStatus) bool { return len(ss) == 1 && ss[0].State == mcp.StateReady }); err != nil {
			os.Exit(3)
		}
		fmt.Println("ready")
		for {
			time.Sleep(time.Hour)
		}
	}
}

func appendPid(file, role string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		fmt.Fprintf(f, "%s %d\n", role, os.Getpid())
		f.Close()
	}
}

func stubbornServer(pids string) kairos.MCPServer {
	exe, _ := os.Executable()
	return kairos.MCPServer{Command: exe, Tools: []string{"echo"}, Impact: map[string]string{"echo": "read"},
		Env: map[string]string{"KAIROS_MCP_TEST_STUBBORN": "1", "KAIROS_MCP_TEST_PIDS": pids}}
}

// readPids waits until the file names every role and returns their pids.
func readPids(t *testing.T, file string, roles ...string) map[string]int {
	t.Helper()
	var got map[string]int
	var data []byte
	if err := testkit.Poll(testkit.Deadline(t), func() bool {
		got = map[string]int{}
		data, _ = os.ReadFile(file)
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				got[f[0]], _ = strconv.Atoi(f[1])
			}
		}
		return len(got) >= len(roles)
	}); err != nil {
		t.Fatalf("pids never written: %q", data)
	}
	return got
}

// alive reports whether pid runs (a zombie waiting for its parent does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// waitGone waits until none of pids runs and no process of their group
// pgid is left (the group's guard kills the server and its children
// first and ends a moment after them); it kills what is left when it
// gives up at the test's deadline, so that a failing test leaves nothing
// behind.
func waitGone(t *testing.T, pids map[string]int, pgid int) {
	t.Helper()
	var left []string
	if err := testkit.Poll(testkit.Deadline(t), func() bool {
		left = nil
		for role, pid := range pids {
			if alive(pid) {
				left = append(left, role)
			}
		}
		for pid := range groupMembers(pgid) {
			left = append(left, "group member "+pid)
		}
		return len(left) == 0
	}); err != nil {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		syscall.Kill(-pgid, syscall.SIGKILL)
		t.Fatalf("still running at the test's deadline: %v", left)
	}
}

// groupOf is pid's process group (0 when pid does not run).
func groupOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state ppid pgrp …
	if len(f) < 3 {
		return 0
	}
	pgrp, _ := strconv.Atoi(f[2])
	return pgrp
}

// groupMembers lists the running processes of process group pgid.
func groupMembers(pgid int) map[string]int {
	out := map[string]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && groupOf(pid) == pgid && alive(pid) {
			out[e.Name()] = pid
		}
	}
	return out
}

// serverGroup is the server's process group, which must be its own
// (neither the test's nor the host's).
func serverGroup(t *testing.T, pids map[string]int) int {
	t.Helper()
	pgid := groupOf(pids["server"])
	if pgid == 0 || pgid == syscall.Getpgrp() || groupOf(pids["sleeper"]) != pgid {
		t.Fatalf("server group %d, sleeper's %d, ours %d", pgid, groupOf(pids["sleeper"]), syscall.Getpgrp())
	}
	return pgid
}

// TestStdioServerEndsWithTheManager: a stdio server that ignores the end
// of its stdin and SIGTERM, and what it started, are gone once the
// manager is closed: no process of its group is left.
func TestStdioServerEndsWithTheManager(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	m, _, _ := newManager(t, nil)
	p := policyWith(map[string]kairos.MCPServer{"stubborn": stubbornServer(pidFile)})
	m.Apply(p)
	waitState(t, m, p, "stubborn", mcp.StateReady)
	pids := readPids(t, pidFile, "server", "sleeper")
	pgid := serverGroup(t, pids)
	m.Close()
	waitGone(t, pids, pgid)
}

// TestStdioServerEndsWithAKilledKairos: when the process supervising a
// stdio server is SIGKILLed (no Close, no end of stdin it would heed),
// the server ends with it, and so does what the server started: no
// process of its group is left.
func TestStdioServerEndsWithAKilledKairos(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := exec.Command(exe)
	host.Env = append(os.Environ(), "KAIROS_MCP_TEST_HOST=1", "KAIROS_MCP_TEST_PIDS="+pidFile)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line) == "ready"
	}()
	select {
	case ok := <-ready:
		if !ok {
			host.Process.Kill()
			t.Fatal("the host never got its server ready")
		}
	case <-testkit.Deadline(t).Done():
		host.Process.Kill()
		t.Fatal("the host never got its server ready")
	}
	pids := readPids(t, pidFile, "server", "sleeper")
	pgid := serverGroup(t, pids)
	host.Process.Kill() // SIGKILL: nothing of the host runs after this
	host.Wait()
	waitGone(t, pids, pgid)
}
