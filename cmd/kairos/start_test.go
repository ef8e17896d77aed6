package main

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
)

// TestFailedStartSaysTheCauseAlone: a start that cannot succeed prints
// its cause as the only line and exits 2, having started nothing and
// created nothing (a busy KAIROS_HTTP_ADDR printed the claim code, the
// probes' warnings and "job failed … context canceled" lines before
// "bind: address already in use"; a refused token two job lines).
func TestFailedStartSaysTheCauseAlone(t *testing.T) {
	parallel(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() }) // not defer: the subtests run in parallel, after this function returns
	for _, tc := range []struct {
		name  string
		setup func(e *env)
		want  string
	}{
		{"busy address", func(e *env) { e.vars["KAIROS_HTTP_ADDR"] = busy.Addr().String() }, "kairos: KAIROS_HTTP_ADDR " + busy.Addr().String() + ": listen tcp"},
		{"refused token", func(e *env) { e.tg.InjectError("getMe", 1, 401, "Unauthorized") }, "kairos: Telegram refused TELEGRAM_BOT_TOKEN (401"},
		{"token Telegram cannot parse", func(e *env) { e.tg.InjectError("getMe", 1, 404, "Not Found") }, "kairos: Telegram refused TELEGRAM_BOT_TOKEN (404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := sqliteEnv(t)
			tc.setup(e)
			code := e.main().Main(context.Background(), []string{"run"})
			lines := strings.Split(strings.TrimSpace(e.logs.String()), "\n")
			if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
				t.Fatalf("exit %d, %d lines (want 2, one line %q):\n%s", code, len(lines), tc.want, e.logs.String())
			}
			if _, err := os.Stat(e.vars["KAIROS_DATA_DIR"]); !os.IsNotExist(err) {
				t.Fatalf("the failed start created the data folder: %v", err)
			}
		})
	}
}
