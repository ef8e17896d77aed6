package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/desk"
	"github.com/kairos-agent/kairos/internal/tokens"
	"github.com/kairos-agent/kairos/media"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/tools/research"
	searchtool "github.com/kairos-agent/kairos/tools/search"
)

// newResearch wires seed 004's research: its traces and the offline index
// in the store, the user's memories, the spend-guarded model (research
// counts against the user's caps), the search tool's provider for the web
// tier, and the media package's PDF reader for the offline folder.
func (m *Main) newResearch(c *core) *research.Engine {
	rs := store.NewResearchStore(c.db)
	cfg := research.Config{Store: rs, Index: rs, Memories: c.memories, Model: c.spend,
		Models: func() []string { return c.agent.Models(c.policy()) },
		HTTP:   &http.Client{Timeout: 20 * time.Second}, Policy: c.policy, PDFText: media.PDFText,
		Secrets: m.Config.SensitiveValues(), CountTokens: tokens.Count, Now: c.now, Logger: c.log}
	if c.search != nil {
		cfg.Search = webSearch{c.search}
	}
	return research.New(cfg)
}

// webSearch is the research web tier's view of the search tool.
type webSearch struct{ t *searchtool.Tool }

func (w webSearch) Search(ctx context.Context, q string, max int) ([]research.SearchResult, error) {
	rs, err := w.t.Search(ctx, searchtool.Request{Query: q, MaxResults: min(max, searchtool.MaxMaxResults)})
	out := make([]research.SearchResult, len(rs))
	for i, r := range rs {
		out[i] = research.SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Snippet, Date: r.Date}
	}
	return out, err
}

// addResearchCommands puts /research in the table; it exists while the
// policy in force enables research.
func (m *Main) addResearchCommands(c *core, t *desk.Table) {
	t.Add(desk.Command{Name: "research", Description: "A cited answer: /research QUESTION (alone: the last research)",
		Available: func(p *kairos.Policy) bool { return p.Research.Enabled },
		Run: func(ctx context.Context, in *kairos.Inbound, args string) (string, error) {
			return researchCommand(ctx, c, in, args)
		}})
}

// researchCommand is /research QUESTION, or /research alone for the last
// trace. The spend is the user's, as a turn's.
func researchCommand(ctx context.Context, c *core, in *kairos.Inbound, args string) (string, error) {
	if strings.TrimSpace(args) == "" {
		rs := store.NewResearchStore(c.db)
		tr, err := rs.LastTrace(ctx, in.UserKey())
		if kairos.ErrorCode(err) == kairos.ENOTFOUND {
			return "No research yet. Ask with /research QUESTION.", nil
		}
		if err != nil {
			return "", err
		}
		return formatTrace(tr), nil
	}
	ctx = kairos.WithSpend(ctx, kairos.SpendContext{UserKey: in.UserKey(), ThreadKey: in.ThreadKey(), Kind: kairos.SpendChat})
	res, err := c.research.Research(ctx, research.Request{UserKey: in.UserKey(), ThreadKey: in.ThreadKey(), Question: args,
		UserURLs: research.URLsIn(args)})
	if err != nil {
		return "", err
	}
	return formatResearch(res), nil
}

// formatResearch renders an answer for Telegram and the terminal: the
// claims with their numbered sources, the confidence and its reason, the
// tiers used and the spend. Source text is escaped: it is untrusted.
func formatResearch(res *research.Result) string {
	var b strings.Builder
	b.WriteString(desk.EscapeMD(res.Answer))
	if !res.Abstained {
		fmt.Fprintf(&b, "\n\n*Confidence:* %s (%s)", res.Confidence, desk.EscapeMD(res.ConfidenceReason))
	}
	if len(res.Sources) > 0 {
		b.WriteString("\n\n*Sources*")
		for _, s := range res.Sources {
			fmt.Fprintf(&b, "\n%d. %s", s.ID, sourceLine(s))
		}
	}
	if len(res.Found) > 0 {
		b.WriteString("\n\n*What I read*")
		for _, s := range res.Found {
			fmt.Fprintf(&b, "\n- %s", sourceLine(s))
		}
	}
	for i, bk := range res.Books {
		if i == 0 {
			b.WriteString("\n\n*Books* (suggestions only; nothing is bought)")
		}
		how := "free"
		if !bk.Free {
			how = "paid: only with your approval"
		}
		fmt.Fprintf(&b, "\n- %s", desk.EscapeMD(bk.Title))
		if bk.Author != "" {
			b.WriteString(", " + desk.EscapeMD(bk.Author))
		}
		fmt.Fprintf(&b, " (%s) %s", how, desk.EscapeMD(bk.Reason))
	}
	if res.Spend != nil {
		fmt.Fprintf(&b, "\n\nTiers: %s. Spent: %d model calls, %d tokens, %d retrievals, %.0f s.",
			strings.Join(res.TiersUsed, ", "), res.Spend.Calls, res.Spend.Tokens, res.Spend.ToolCalls, res.Spend.Seconds)
	}
	return b.String()
}

func sourceLine(s research.Source) string {
	where := s.URL
	if where == "" && s.Tier == kairos.TierOffline {
		where = s.Path
	}
	line := desk.EscapeMD(s.Title) + " (" + s.Tier
	if where != "" {
		line += ", " + desk.EscapeMD(where)
	}
	if s.PublishedAt != "" {
		line += ", " + s.PublishedAt
	}
	line += ")"
	if s.Quote != "" {
		line += ": “" + desk.EscapeMD(s.Quote) + "”"
	}
	return line
}

// formatTrace shows a trace: the question, its answer (or that it is
// still running) and what research did on the way.
func formatTrace(tr *kairos.ResearchTrace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Last research* (%s, %s): %s\n\n", tr.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), tr.Status, desk.EscapeMD(tr.Question))
	var res research.Result
	if len(tr.Answer) > 0 && json.Unmarshal(tr.Answer, &res) == nil {
		b.WriteString(formatResearch(&res))
	} else {
		b.WriteString("It has no answer yet; asking the same question again resumes it.")
	}
	var st struct {
		Refused []string `json:"refused"`
		Dropped []string `json:"dropped"`
		Notes   []string `json:"notes"`
	}
	if json.Unmarshal(tr.State, &st) == nil {
		fmt.Fprintf(&b, "\n\nDropped claims: %d. Refused requests: %d.", len(st.Dropped), len(st.Refused))
		for _, n := range st.Notes {
			b.WriteString("\n- " + desk.EscapeMD(n))
		}
	}
	fmt.Fprintf(&b, "\nTrace: %s", tr.ID)
	return b.String()
}

// ResearchTraces serves GET /api/v1/research.
func (be *consoleBackend) ResearchTraces(ctx context.Context, userKey string, p kairos.Page) ([]*kairos.ResearchTrace, string, error) {
	return store.NewResearchStore(be.c.db).Traces(ctx, userKey, p)
}
