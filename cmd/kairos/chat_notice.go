package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
)

// chatLogFile sends kairos chat's log lines to KAIROS_DATA_DIR/chat.log
// (0600, this chat's lines only): the terminal is the chat, and WARN and
// ERROR lines there drowned it. The file is made at the first line, so a
// chat refused for its configuration creates nothing; when it cannot be
// made the lines go to stderr after all.
func (m *Main) chatLogFile() {
	l := &chatLog{dir: m.Config.DataDir, fallback: m.Stderr}
	m.logTo = l
	m.onClose(l.Close)
}

// chatLog is the chat's log file, opened at its first line.
type chatLog struct {
	dir      string
	fallback io.Writer
	mu       sync.Mutex
	f        io.WriteCloser
	failed   bool
}

func (l *chatLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil && !l.failed {
		f, err := func() (*os.File, error) {
			if err := os.MkdirAll(l.dir, 0o700); err != nil {
				return nil, err
			}
			return os.OpenFile(filepath.Join(l.dir, "chat.log"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		}()
		if err != nil {
			l.failed = true
		} else {
			l.f = f
		}
	}
	if l.failed {
		return l.fallback.Write(p)
	}
	return l.f.Write(p)
}

func (l *chatLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// tellModelTrouble says once, in words, in the chat, when the model
// endpoint cannot answer: at start (its model list) or at the first turn
// that failed for it. The turns' own apologies go on; the details are in
// the log.
func (m *Main) tellModelTrouble(ctx context.Context, c *core, out *terminal) {
	var once sync.Once
	say := func(err error) {
		once.Do(func() { out.Final(ctx, m.modelTrouble(err)) })
	}
	c.mu.Lock()
	c.onModelFailure = say
	c.mu.Unlock()
	go func() {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		_, err := c.model.Models(pctx)
		var pe *kairos.ProviderError
		if err != nil && ctx.Err() == nil && errors.As(err, &pe) && (pe.StatusCode == 0 || agent.IsAuthFailure(err)) {
			say(err) // a server without /models (404) may still chat
		}
	}()
}

// modelTrouble is the sentence for a model endpoint that fails.
func (m *Main) modelTrouble(err error) string {
	where := "the log: " + filepath.Join(m.Config.DataDir, "chat.log") + " (or kairos chat -v)"
	if m.logTo == nil {
		where = "the log lines above"
	}
	base := m.Config.OpenAIBaseURL
	var pe *kairos.ProviderError
	switch {
	case agent.IsAuthFailure(err):
		return fmt.Sprintf("Note: the model endpoint %s refuses my API key, so I cannot answer. Check OPENAI_API_KEY (and OPENAI_BASE_URL). Details in %s.", base, where)
	case errors.As(err, &pe) && pe.StatusCode == 0:
		return fmt.Sprintf("Note: I cannot reach the model endpoint %s (%s), so I cannot answer until it runs. Check OPENAI_BASE_URL; `kairos doctor` checks the setup. Details in %s.", base, probeErr(err), where)
	}
	return fmt.Sprintf("Note: the model endpoint %s fails (%s). Details in %s.", base, probeErr(err), where)
}
