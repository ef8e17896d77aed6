package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/agent"
	searchtool "github.com/kairos-agent/kairos/tools/search"
)

// oneLine turns a multi-line error (pgx lists every address it tried)
// into one line without repeated parts.
func oneLine(err error) string {
	seen := map[string]bool{}
	var parts []string
	for _, p := range strings.Split(err.Error(), "\n") {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// probeTimeout bounds each start-up probe (they run in the background).
const probeTimeout = 5 * time.Second

// probeSearch warns once, at start, when the SearXNG backend does not
// answer: the search tool would otherwise fail only when first used. The
// probe is the tool's own (searchtool.Probe); a paid provider is not
// probed (it would cost a query at every start).
func (m *Main) probeSearch(ctx context.Context, c *core) {
	if c.search == nil || c.search.Provider() != searchtool.ProviderSearXNG {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	err := c.search.Probe(ctx)
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		c.log.Warn("search backend does not answer; the search tool fails until it does (KAIROS_SEARCH_URL, or another KAIROS_SEARCH_PROVIDER)",
			"provider", searchtool.ProviderSearXNG, "url", m.Config.SearchURL, "err", kairos.ErrorMessage(err))
	}
}

// probeModel asks the model endpoint once, at start, for its model list
// with the API key (GET /models): a refused key (401 or 403) would
// otherwise show only when the first turn fails, an endpoint that does
// not answer likewise. One warning line says which; any other answer
// (a server without /models) is left to the turns.
func (m *Main) probeModel(ctx context.Context, c *core) {
	if c.model == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := c.model.Models(ctx)
	var pe *kairos.ProviderError
	switch {
	case err == nil || errors.Is(ctx.Err(), context.Canceled):
	case agent.IsAuthFailure(err):
		errors.As(err, &pe)
		c.log.Warn("the model endpoint refused the API key at start: every turn fails until OPENAI_API_KEY (and OPENAI_BASE_URL) is fixed",
			"base_url", m.Config.OpenAIBaseURL, "status", pe.StatusCode)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &pe) && pe.StatusCode == 0):
		c.log.Warn("the model endpoint is unreachable at start; turns fail until it answers (OPENAI_BASE_URL)",
			"base_url", m.Config.OpenAIBaseURL, "err", oneLine(err))
	}
}
