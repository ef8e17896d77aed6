package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// TestAPIUnknownPathsAnswerJSON: whatever no route of /api/v1 takes is
// answered in the API's JSON error body, never the mux's plain text: 404
// for an unknown path (generated under every resource), 405 with Allow
// for a known path asked with another method.
func TestAPIUnknownPathsAnswerJSON(t *testing.T) {
	e := newEnv(t)
	read := e.apiToken(t, "read", "dash")
	base := "http://" + e.start() + "/api/v1"
	rng := rand.New(rand.NewPCG(37, 1))
	var paths []string
	for _, res := range []string{"", "users/", "threads/1/", "memories/", "schedules/9/", "skills/", "policy/"} {
		for range 3 {
			paths = append(paths, fmt.Sprintf("/%snope%d/x", res, rng.IntN(1e6)))
		}
	}
	for _, p := range paths {
		for _, tok := range []string{"", read} {
			code, body := apiCall(t, "GET", base+p, tok, "", nil)
			errBody, _ := body["error"].(map[string]any)
			if code != 404 || errBody["code"] != "not_found" || !strings.Contains(fmt.Sprint(errBody["message"]), "openapi.json") {
				t.Fatalf("GET %s: %d %v", p, code, body)
			}
		}
	}
	for _, tc := range []struct{ method, path, allow string }{
		{"DELETE", "/users", "GET"},
		{"POST", "/threads/abc/messages", "GET"},
		{"PATCH", "/policy", "GET, PUT"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		code, body := apiCall(t, tc.method, base+tc.path, read, "", nil)
		if code != 405 || resp.Header.Get("Allow") != tc.allow || body["error"] == nil {
			t.Fatalf("%s %s: %d Allow %q %v", tc.method, tc.path, code, resp.Header.Get("Allow"), body)
		}
	}
}
