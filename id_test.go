package kairos_test

import (
	"regexp"
	"testing"

	"github.com/kairos-agent/kairos"
)

func TestNewID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := kairos.NewID()
		if !v4.MatchString(id) {
			t.Fatalf("%q is not a version-4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}
