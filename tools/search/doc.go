// Package search is the model-facing `search` tool (seed 003, Tool 1): it
// asks one web search provider — SearXNG's JSON API (the default), the
// Brave Search API, Tavily, or DuckDuckGo's HTML endpoint — and normalizes
// the answer to {title, url, snippet, date?}.
//
// Every result is untrusted web content: the tool marks its ToolResult as
// tainted and says so in the JSON, so that the policy layer can restrict
// what the rest of the turn may do.
//
// It must not log or return API keys or URLs that carry them, must not
// follow result links (it never fetches the pages it reports), and must not
// import other adapters: it talks HTTP with the standard library only.
package search
