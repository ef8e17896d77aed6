package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEListsEveryCommand: each command of the table appears in the
// README's command list (a line naming "kairos GROUP" and the verb).
func TestREADMEListsEveryCommand(t *testing.T) {
	parallel(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, c := range sortedCommands() {
		words := strings.Fields(c.Name)
		found := false
		for _, l := range lines {
			if strings.Contains(l, "`kairos "+words[0]) && (len(words) == 1 || regexp.MustCompile(`\b`+words[1]+`\b`).MatchString(l)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md does not list `kairos %s`", c.Name)
		}
	}
}

var (
	clockRef = regexp.MustCompile(`CLOCK\.md ?§ ?([0-9]+(?:\.[0-9]+)?)`)
	seedRef  = regexp.MustCompile(`\bseed (00[0-9])\b`)
)

// TestDocReferencesPointToFiles: every "CLOCK.md §N.N" in the code and
// docs names a section of doc/seeds/CLOCK.md, and every "seed 00N" one
// of the seeds doc/seeds/README.md lists.
func TestDocReferencesPointToFiles(t *testing.T) {
	parallel(t)
	clock, err := os.ReadFile("../../doc/seeds/CLOCK.md")
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile("../../doc/seeds/README.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "seeds" || d.Name() == "testdata") {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".json":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, m := range clockRef.FindAllStringSubmatch(string(b), -1) {
			checked++
			if !regexp.MustCompile(`(?m)^#{2,3} ` + regexp.QuoteMeta(m[1]) + `[ .]`).Match(clock) {
				t.Errorf("%s: %s names no section of doc/seeds/CLOCK.md", path, m[0])
			}
		}
		for _, m := range seedRef.FindAllStringSubmatch(string(b), -1) {
			checked++
			if !strings.Contains(string(index), "seed "+m[1]) {
				t.Errorf("%s: %s is not in doc/seeds/README.md", path, m[0])
			}
		}
		return nil
	})
	if checked == 0 {
		t.Fatal("no references found: the walk is wrong")
	}
}
