package mcp

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/kairos-agent/kairos"
)

// clean relies on the manager's redactor alone: the server's bearer token
// and secret_env values (raw and encoded) and any other configured secret
// are gone from the error.
func TestCleanScrubsServerSecrets(t *testing.T) {
	secrets := map[string]string{"TOK": "bearer-token-123", "ENV": "env-value-456", "OTHER": "other-secret-789"}
	m := New(Config{Secrets: secrets})
	s := &server{m: m, spec: kairos.MCPServer{TokenSecret: "TOK", SecretEnv: map[string]string{"API_KEY": "ENV"}}}
	err := s.clean(errors.New("401: Bearer bearer-token-123; env=" + base64.StdEncoding.EncodeToString([]byte("env-value-456")) +
		"; other-secret-789 " + strings.Repeat("x", 400)))
	for _, v := range secrets {
		if strings.Contains(err.Error(), v) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte(v))) {
			t.Errorf("secret %q left in %q", v, err)
		}
	}
	if !strings.Contains(err.Error(), "[REDACTED]") || len([]rune(err.Error())) > 301 {
		t.Errorf("clean = %q, want redacted and clipped", err)
	}
}
