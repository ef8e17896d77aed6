package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helpEnv is an environment in which running any command for real would
// leave a trace: a data dir and a policy path that must not be created,
// and a backup target named --help.
func helpEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	dir := t.TempDir()
	e.vars["KAIROS_DATA_DIR"] = filepath.Join(dir, "data")
	return e, dir
}

func assertNothingWritten(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("help wrote %v into %s", ents, dir)
	}
	if ents, _ := os.ReadDir("."); len(ents) > 0 {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "-") || e.Name() == "data" {
				t.Fatalf("help wrote %q into the working directory", e.Name())
			}
		}
	}
}

// TestEveryCommandAnswersHelp runs `kairos NAME --help`, `NAME -h` and
// `kairos help NAME` for every command of the table: usage on stdout,
// exit 0, stderr empty, nothing written and nothing run.
func TestEveryCommandAnswersHelp(t *testing.T) {
	parallel(t)
	for _, c := range sortedCommands() {
		words := strings.Fields(c.Name)
		for _, args := range [][]string{
			append(append([]string{}, words...), "--help"),
			append(append([]string{}, words...), "-h"),
			append([]string{"help"}, words...),
			// After an argument too: `backup --help` must not back up to "--help".
			append(append([]string{}, words...), "x.js", "--help"),
		} {
			t.Run(strings.Join(args, "_"), func(t *testing.T) {
				e, dir := helpEnv(t)
				if code := e.main().Main(context.Background(), args); code != 0 {
					t.Fatalf("exit %d; stderr %q", code, e.logs.String())
				}
				if !strings.HasPrefix(e.out.String(), "usage: kairos "+c.Name) {
					t.Fatalf("stdout %q does not start with the usage", e.out.String())
				}
				if e.logs.String() != "" {
					t.Fatalf("stderr %q, want nothing", e.logs.String())
				}
				assertNothingWritten(t, dir)
			})
		}
	}
}

func TestTopLevelHelpVersionAndGroups(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		args     []string
		code     int
		stdout   string // prefix of stdout
		stderr   string // substring of stderr
		noStdout bool
	}{
		{args: []string{"--help"}, stdout: "usage: kairos <command>"},
		{args: []string{"-h"}, stdout: "usage: kairos <command>"},
		{args: []string{"help"}, stdout: "usage: kairos <command>"},
		{args: []string{"--version"}, stdout: "kairos "},
		{args: []string{"help", "clock"}, stdout: "usage: kairos clock <command>"},
		{args: []string{"clock", "--help"}, stdout: "usage: kairos clock <command>"},
		{args: []string{"clock"}, code: 2, stderr: "clock: a command is required", noStdout: true},
		{args: []string{"clock", "frob"}, code: 2, stderr: `unknown command "clock frob"`, noStdout: true},
		{args: []string{"frob"}, code: 2, stderr: "usage: kairos <command>", noStdout: true},
		{args: []string{"help", "frob"}, code: 2, stderr: "unknown command", noStdout: true},
		{args: []string{"backup", "--bogus", "x"}, code: 2, stderr: "-bogus", noStdout: true},
		{args: []string{"backup"}, code: 2, stderr: "usage: kairos backup FILE", noStdout: true},
		{args: []string{"backup", "a", "b"}, code: 2, stderr: `unexpected argument "b"`, noStdout: true},
		{args: []string{"version", "extra"}, code: 2, stderr: "unexpected argument", noStdout: true},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			e, dir := helpEnv(t)
			if code := e.main().Main(context.Background(), tc.args); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, e.logs.String())
			}
			if tc.noStdout && e.out.String() != "" {
				t.Fatalf("stdout %q, want nothing", e.out.String())
			}
			if !strings.HasPrefix(e.out.String(), tc.stdout) || !strings.Contains(e.logs.String(), tc.stderr) {
				t.Fatalf("stdout %q (want prefix %q), stderr %q (want %q)", e.out.String(), tc.stdout, e.logs.String(), tc.stderr)
			}
			assertNothingWritten(t, dir)
		})
	}
}

// TestCommandsNeedingNoConfigIgnoreIt: version, help and clock parse run
// with an environment that would make every other command exit 2.
func TestCommandsNeedingNoConfigIgnoreIt(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"help"}, {"clock", "parse", "tomorrow 9am", "--tz", "UTC"}} {
		e, _ := helpEnv(t)
		e.vars["KAIROS_LOG_FORMAT"] = "xml"
		if code := e.main().Main(context.Background(), args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.logs.String())
		}
	}
}

// TestBinaryHelpDoesNothing drives the built binary: `backup --help` in an
// empty directory prints the usage and leaves the directory empty.
func TestBinaryHelpDoesNothing(t *testing.T) {
	parallel(t)
	bin := kairosBin.Path(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"backup", "--help"}, {"cell", "run", "--help"}, {"help", "run"}, {"--version"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v; stderr %q", args, err, errb.String())
		}
		if !strings.HasPrefix(out.String(), "usage: kairos") && !strings.HasPrefix(out.String(), "kairos ") {
			t.Fatalf("%v: stdout %q", args, out.String())
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%v left %v behind", args, ents)
		}
	}
	cmd := exec.Command(bin, "frobnicate")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errb.String(), "usage: kairos") {
		t.Fatalf("unknown command: %v, stderr %q", err, errb.String())
	}
}
