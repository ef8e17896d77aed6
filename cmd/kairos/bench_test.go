package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kairos-agent/kairos/internal/testkit"
)

// BenchmarkTurn is one full turn through the real pipeline (clock
// wrapper, session store, prompt assembly, memory recall, the go-openai
// adapter over HTTP, persistence) against an instant fake model.
func BenchmarkTurn(b *testing.B) {
	e := &env{llm: testkit.NewFakeOpenAI(b), logs: &syncBuffer{}, out: &syncBuffer{}}
	dir := b.TempDir()
	e.vars = map[string]string{"OPENAI_BASE_URL": e.llm.URL(), "KAIROS_DATA_DIR": dir, "KAIROS_POLICY": dir + "/none.yaml",
		"KAIROS_SEARCH_URL": "http://127.0.0.1:1", "KAIROS_LOG_LEVEL": "error"}
	e.llm.SetHandler(func(testkit.ChatRequest) testkit.Reply { return testkit.TextReply("ok") })
	c := e.openCore(b)
	out := &terminal{w: e.out}
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in := cliMessage(fmt.Sprintf("message %d", i), at.Add(time.Duration(i)*time.Second))
		in.UserID, in.ChatID = int64(i%50), int64(i%50) // 50 threads
		if err := c.agent.HandleMessage(context.Background(), in, out); err != nil {
			b.Fatal(err)
		}
	}
}
