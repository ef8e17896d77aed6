package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complQuery is one completion asked of a shell: the words typed so far,
// the last being the one completed (may be "").
type complQuery struct {
	words []string
	want  []string // every one must be offered
}

// complQueries derives the queries from the command table itself: the
// first word offers every command and group, each group its commands,
// each command its flags, and completion its shells.
func complQueries() []complQuery {
	var qs []complQuery
	var top []string
	groups := map[string][]string{}
	for _, c := range sortedCommands() {
		first, second, ok := strings.Cut(c.Name, " ")
		if !slices.Contains(top, first) {
			top = append(top, first)
		}
		if ok {
			groups[first] = append(groups[first], second)
		}
		flags := []string{"--help"}
		newFlagSet(c).VisitAll(func(f *flag.Flag) { flags = append(flags, "--"+f.Name) })
		qs = append(qs, complQuery{words: append(strings.Fields(c.Name), "--"), want: flags})
	}
	qs = append(qs, complQuery{words: []string{""}, want: append(top, "help")},
		complQuery{words: []string{"completion", ""}, want: []string{"bash", "zsh", "fish"}},
		complQuery{words: []string{"help", "cl"}, want: []string{"clock"}})
	for g, subs := range groups {
		qs = append(qs, complQuery{words: []string{g, ""}, want: subs})
	}
	return qs
}

// askShell runs every query through the shell's completion of the
// script and returns the offers of each, one line per query.
func askShell(t *testing.T, shell, script string, qs []complQuery) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kairos."+shell)
	os.WriteFile(path, []byte(script), 0o600)
	var b strings.Builder
	switch shell {
	case "bash":
		fmt.Fprintf(&b, "source %q\n", path)
		for _, q := range qs {
			fmt.Fprintf(&b, "COMP_WORDS=(kairos %s); COMP_CWORD=%d; _kairos; echo \"${COMPREPLY[*]}\"\n", shellWords(q.words), len(q.words))
		}
	case "zsh":
		fmt.Fprintf(&b, "source %q\ncompadd() { [[ $1 == -- ]] && shift; print -rn -- \"$* \"; }\n_files() { print -rn -- '<files> '; }\n", path)
		for _, q := range qs {
			fmt.Fprintf(&b, "words=(kairos %s); CURRENT=%d; _kairos; print\n", shellWords(q.words), len(q.words)+1)
		}
	case "fish":
		fmt.Fprintf(&b, "source %q\n", path)
		for _, q := range qs {
			fmt.Fprintf(&b, "echo (complete -C %q | string split -f1 \\t)\n", "kairos "+strings.Join(q.words, " "))
		}
	}
	out, err := exec.Command(shell, "-c", b.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", shell, err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(qs) {
		t.Fatalf("%s answered %d lines for %d queries:\n%s", shell, len(lines), len(qs), out)
	}
	return lines
}

func shellWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, " ")
}

// TestCompletionFromTheCommandTable: each shell's script, run by the shell
// itself, completes every command, every group's commands and every
// command's flags of the table (there was no completion).
func TestCompletionFromTheCommandTable(t *testing.T) {
	qs := complQueries()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed", shell)
			}
			e := newEnv(t)
			if code := e.main().Main(context.Background(), []string{"completion", shell}); code != 0 {
				t.Fatalf("exit %d: %s", code, e.logs.String())
			}
			for i, offered := range askShell(t, shell, e.out.String(), qs) {
				got := strings.Fields(offered)
				for _, w := range qs[i].want {
					if !slices.Contains(got, w) {
						t.Errorf("kairos %s<TAB> offers %q, not %q", strings.Join(qs[i].words, " "), got, w)
					}
				}
			}
		})
	}
	e := newEnv(t)
	if code := e.main().Main(context.Background(), []string{"completion", "tcsh"}); code != 2 || !strings.Contains(e.logs.String(), "bash, zsh or fish") {
		t.Fatalf("an unknown shell: exit %d, %q", code, e.logs.String())
	}
}
