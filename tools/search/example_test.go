package search_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/kairos-agent/kairos/tools/search"
)

func ExampleTool_Search() {
	// A stand-in for a SearXNG instance (KAIROS_SEARCH_URL).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"results":[{"title":"Kairos","url":"https://example.com/","content":"A <b>personal</b> agent.","publishedDate":null}]}`)
	}))
	defer srv.Close()

	tool, err := search.New(search.Config{Provider: search.ProviderSearXNG, BaseURL: srv.URL})
	if err != nil {
		panic(err)
	}
	results, err := tool.Search(context.Background(), search.Request{Query: "kairos agent"})
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Printf("%s <%s>: %s\n", r.Title, r.URL, r.Snippet)
	}
	// Output: Kairos <https://example.com/>: A personal agent.
}
