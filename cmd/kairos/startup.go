package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
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

// probeSearch warns once, at start, when the SearXNG backend does not
// answer: the search tool would otherwise fail only when first used.
func (m *Main) probeSearch(ctx context.Context, c *core) {
	if m.Config.SearchProvider != "searxng" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := searxngAnswers(ctx, m.Config.SearchURL)
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		c.log.Warn("search backend does not answer; the search tool fails until it does (KAIROS_SEARCH_URL, or another KAIROS_SEARCH_PROVIDER)",
			"provider", "searxng", "url", m.Config.SearchURL, "err", err)
	}
}

func searxngAnswers(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/search?q=kairos&format=json", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			return ue.Unwrap()
		}
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d (is format json enabled in its settings.yml?)", resp.StatusCode)
	}
	return nil
}
