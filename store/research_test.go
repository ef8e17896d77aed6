package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

func TestResearchTraces(t *testing.T) {
	ctx := context.Background()
	s := store.NewResearchStore(storetest.MustOpenDB(t))
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var ids []string
	for i := 0; i < 5; i++ {
		tr := &kairos.ResearchTrace{UserKey: "telegram:1", Question: fmt.Sprintf("q%d", i), QuestionKey: fmt.Sprintf("q%d", i),
			Depth: kairos.DepthNormal, Status: kairos.ResearchRunning, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := s.CreateTrace(ctx, tr); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.ID)
	}
	other := &kairos.ResearchTrace{UserKey: "telegram:2", Question: "q0", QuestionKey: "q0", Status: kairos.ResearchRunning, CreatedAt: base}
	if err := s.CreateTrace(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTrace(ctx, &kairos.ResearchTrace{UserKey: "telegram:1"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a trace without a question: %v", err)
	}
	// Running traces are found by question, only the user's own, only
	// when recent enough.
	got, err := s.RunningTrace(ctx, "telegram:1", "q2", time.Time{})
	if err != nil || got.ID != ids[2] {
		t.Fatalf("running q2 = %v, %v", got, err)
	}
	if _, err := s.RunningTrace(ctx, "telegram:1", "q2", time.Now().Add(time.Hour)); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("a trace older than since was found: %v", err)
	}
	got.Status, got.State, got.Answer, got.Tainted = kairos.ResearchAnswered, []byte(`{"tier":2}`), []byte(`{"answer":"x"}`), true
	if err := s.SaveTrace(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunningTrace(ctx, "telegram:1", "q2", time.Time{}); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("an answered trace is still running: %v", err)
	}
	back, err := s.Trace(ctx, "telegram:1", ids[2])
	if err != nil || string(back.State) != `{"tier":2}` || string(back.Answer) != `{"answer":"x"}` || !back.Tainted || back.Status != kairos.ResearchAnswered {
		t.Fatalf("saved trace = %+v, %v", back, err)
	}
	if _, err := s.Trace(ctx, "telegram:2", ids[2]); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("another user's trace was found: %v", err)
	}
	if err := s.SaveTrace(ctx, &kairos.ResearchTrace{ID: "nope"}); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Fatalf("saving a missing trace: %v", err)
	}
	if last, err := s.LastTrace(ctx, "telegram:1"); err != nil || last.ID != ids[4] {
		t.Fatalf("last = %v, %v", last, err)
	}
	// Pages: newest first, two at a time, then everyone's.
	var seen []string
	cur := ""
	for {
		page, next, err := s.Traces(ctx, "telegram:1", kairos.Page{Limit: 2, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range page {
			seen = append(seen, tr.ID)
		}
		if next == "" {
			break
		}
		cur = next
	}
	if fmt.Sprint(seen) != fmt.Sprint([]string{ids[4], ids[3], ids[2], ids[1], ids[0]}) {
		t.Fatalf("pages = %v", seen)
	}
	if all, _, err := s.Traces(ctx, "", kairos.Page{}); err != nil || len(all) != 6 {
		t.Fatalf("everyone's traces: %d, %v", len(all), err)
	}
	if _, _, err := s.Traces(ctx, "", kairos.Page{Cursor: "junk"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Fatalf("a bad cursor: %v", err)
	}
}

func TestResearchEvidence(t *testing.T) {
	ctx := context.Background()
	s := store.NewResearchStore(storetest.MustOpenDB(t))
	tr := &kairos.ResearchTrace{UserKey: "telegram:1", Question: "q", QuestionKey: "q", Status: kairos.ResearchRunning}
	if err := s.CreateTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= 11; i++ {
		e := &kairos.Evidence{TraceID: tr.ID, Ref: fmt.Sprintf("E%d", i), Tier: kairos.TierWeb, Title: "t", URL: "https://a.example/x",
			Text: fmt.Sprintf("text %d", i), RetrievedAt: at, Tainted: true}
		if i == 2 {
			e.PublishedAt = at.AddDate(-1, 0, 0)
		}
		if err := s.AddEvidence(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddEvidence(ctx, &kairos.Evidence{TraceID: tr.ID, Ref: "E3", Text: "again", RetrievedAt: at}); kairos.ErrorCode(err) != kairos.ECONFLICT {
		t.Fatalf("a ref taken twice: %v", err)
	}
	es, err := s.Evidence(ctx, tr.ID)
	if err != nil || len(es) != 11 {
		t.Fatalf("ledger = %d, %v", len(es), err)
	}
	if es[1].Ref != "E2" || es[10].Ref != "E11" || !es[1].PublishedAt.Equal(at.AddDate(-1, 0, 0)) || !es[0].PublishedAt.IsZero() ||
		!es[0].RetrievedAt.Equal(at) || es[0].URL != "https://a.example/x" || !es[0].Tainted {
		t.Fatalf("ledger read back: %+v %+v", es[0], es[1])
	}
}

func TestResearchIndex(t *testing.T) {
	ctx := context.Background()
	s := store.NewResearchStore(storetest.MustOpenDB(t))
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	docs := []*kairos.ResearchDoc{
		{Path: "rivers/kestrel.md", Title: "Kestrel River", Text: "The river rises in the Varn Hills and runs 412 kilometres.", ModTime: mt, Size: 60},
		{Path: "notes/hills.txt", Title: "Walking notes", Text: "The Kestrel path in the hills is muddy in spring.", ModTime: mt, Size: 50},
		{Path: "astro/moon.html", Title: "Tidal locking", Text: "The Moon keeps one face to the Earth.", ModTime: mt, Size: 40},
	}
	for _, d := range docs {
		if err := s.PutDoc(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.SearchDocs(ctx, "How long is the Kestrel river?", 5)
	if err != nil || len(hits) != 2 || hits[0].Path != "rivers/kestrel.md" {
		t.Fatalf("kestrel search = %v, %v", paths(hits), err)
	}
	if hits, _ := s.SearchDocs(ctx, "rising", 5); len(hits) != 1 || hits[0].Path != "rivers/kestrel.md" {
		t.Fatalf("a stemmed word: %v", paths(hits))
	}
	if hits, _ := s.SearchDocs(ctx, `" OR * NEAR(`, 5); len(hits) != 0 {
		t.Fatalf("FTS syntax in a query matched %v", paths(hits))
	}
	// Replacing a document re-indexes it; deleting removes it.
	if err := s.PutDoc(ctx, &kairos.ResearchDoc{Path: "astro/moon.html", Title: "Orbits", Text: "Phobos orbits Mars.", ModTime: mt.Add(time.Hour), Size: 20}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.SearchDocs(ctx, "moon face", 5); len(hits) != 0 {
		t.Fatalf("the old text is still indexed: %v", paths(hits))
	}
	if hits, _ := s.SearchDocs(ctx, "phobos", 5); len(hits) != 1 {
		t.Fatalf("the new text is not indexed: %v", paths(hits))
	}
	if err := s.DeleteDocs(ctx, []string{"notes/hills.txt"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.SearchDocs(ctx, "muddy", 5); len(hits) != 0 {
		t.Fatalf("a deleted document is found: %v", paths(hits))
	}
	stamps, err := s.DocStamps(ctx)
	if err != nil || len(stamps) != 2 || !stamps["astro/moon.html"].ModTime.Equal(mt.Add(time.Hour)) || stamps["rivers/kestrel.md"].Size != 60 {
		t.Fatalf("stamps = %v, %v", stamps, err)
	}
}

func paths(ds []*kairos.ResearchDoc) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Path)
	}
	return out
}
