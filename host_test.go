package kairos

import "testing"

func TestHostAllowed(t *testing.T) {
	list := []string{"en.wikipedia.org", "*.python.org", " Docs.Example.NET. "}
	for host, want := range map[string]bool{
		"en.wikipedia.org": true, "EN.Wikipedia.org.": true, "de.wikipedia.org": false, "wikipedia.org": false,
		"docs.python.org": true, "a.b.python.org": true, "python.org": false, "evilpython.org": false,
		"docs.example.net": true, "example.net": false, "": false,
	} {
		if got := HostAllowed(host, list); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
	if HostAllowed("x.org", []string{"*."}) || HostAllowed("x.org", nil) {
		t.Error("an empty pattern or list allows")
	}
}
