package kairos_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestModelsDocNamesRealTests: every test doc/models.md cites exists, so
// the server table cannot point at nothing.
func TestModelsDocNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("doc/models.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			src.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := src.String()
	names := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Za-z0-9]+)(?:/[^`]*)?`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 20 {
		t.Fatalf("only %d tests cited", len(names))
	}
	for _, m := range names {
		if !strings.Contains(all, "func "+m[1]+"(") {
			t.Errorf("doc/models.md cites %s, which does not exist", m[1])
		}
	}
}
