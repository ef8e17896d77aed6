package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

// commonWords are frequent words of everyday notes; they make up the head
// of the Zipf distribution the benchmark corpus draws from.
var commonWords = strings.Fields(`the a to and of in is for on with my at it was that this be have from
	work meeting call today tomorrow week plan idea need want like talk home family friend time day
	project email book buy read run walk lunch dinner coffee train car bike doctor gym trip weekend
	money rent bill phone laptop code review team boss client deadline report garden kitchen music
	movie game sleep tired happy stress health kids school class birthday gift party travel flight`)

// benchCorpus inserts n memories of one user straight into the table (the
// triggers fill the FTS index) and returns the ids of planted needles.
func benchCorpus(b *testing.B, db *store.DB, user string, n int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := append([]string(nil), commonWords...)
	syll := []string{"ka", "lo", "mi", "ren", "tu", "sa", "vo", "ne", "dri", "pol", "ax", "ber", "qui", "zen", "ol", "fa"}
	for len(vocab) < 8000 {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syll[rng.IntN(len(syll))])
		}
		vocab = append(vocab, w.String())
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, uint64(len(vocab)-1))
	cats := kairos.MemoryCategories
	ctx := context.Background()
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO memories (id, user_key, store, type, content, tags, period_key, chat_id, merge_key, span_start, span_end, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, '', '', ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := range n {
		words := make([]string, 8+rng.IntN(18))
		for j := range words {
			words[j] = vocab[zipf.Uint64()]
		}
		content := strings.Join(words, " ") + "."
		tags, _ := json.Marshal([]string{vocab[zipf.Uint64()]})
		at := t0 + int64(i)*60_000
		id := kairos.NewID()
		if _, err := stmt.ExecContext(ctx, id, user, kairos.StoreUserMemory, cats[i%len(cats)], content, string(tags), "m:"+id, at, at, at, at); err != nil {
			b.Fatal(err)
		}
	}
	stmt.Close()
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	s := store.NewMemoryStore(db)
	for _, c := range []string{
		"Needs to book a dentist appointment for the cracked molar.",
		"Alice's sister Maria lives in Lisbon; her birthday is on June 14.",
		"Allergic to penicillin.",
	} {
		if _, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: user, Store: kairos.StoreUserMemory, Type: "fact", Content: c}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.SQL().ExecContext(ctx, "INSERT INTO memories_fts(memories_fts) VALUES ('optimize')"); err != nil {
		b.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRecall100k recalls over 100,000 memories of one user on SQLite.
// Besides ns/op it reports the median (p50-ms) and p95 of the iterations.
func BenchmarkRecall100k(b *testing.B) {
	db := storetest.MustOpenSQLite(b)
	const user = "telegram:1"
	benchCorpus(b, db, user, 100_000)
	// Other users' memories share the table.
	benchCorpus(b, db, "telegram:2", 5_000)
	s := store.NewMemoryStore(db)
	ctx := context.Background()
	queries := []struct{ name, q string }{
		{"rare", "dentist appointment molar"},
		{"question", "When is my sister's birthday?"},
		{"common", "work meeting"},
		{"very-common", "the plan for work today"},
		{"hostile", `"work" OR NEAR(meeting* ^call:) AND`},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			f := kairos.MemoryFilter{UserKey: user, Query: q.q, Limit: 10}
			if got, err := s.RecallMemories(ctx, f); err != nil || len(got) == 0 {
				b.Fatalf("recall %q = %d results, %v", q.q, len(got), err)
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				if _, err := s.RecallMemories(ctx, f); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			reportPercentiles(b, durs)
		})
	}
	b.Run("no-memories", func(b *testing.B) { // a new user beside the others
		f := kairos.MemoryFilter{UserKey: "telegram:3", Query: "the plan for work today", Limit: 10}
		durs := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if got, err := s.RecallMemories(ctx, f); err != nil || len(got) != 0 {
				b.Fatalf("recall = %d results, %v", len(got), err)
			}
			durs = append(durs, time.Since(start))
		}
		reportPercentiles(b, durs)
	})
	b.Run("list", func(b *testing.B) {
		f := kairos.MemoryFilter{UserKey: user, Limit: 10, Categories: []string{"fact"}}
		durs := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if _, err := s.RecallMemories(ctx, f); err != nil {
				b.Fatal(err)
			}
			durs = append(durs, time.Since(start))
		}
		reportPercentiles(b, durs)
	})
}

// BenchmarkRecallVectors blends full text with embeddings on 5,000
// embedded memories; each recall compares the MemoryVectorScan most recent
// ones. 1536 is text-embedding-3-small's own size, 256 what it returns
// when asked for `dimensions: 256` (KAIROS_EMBEDDING_DIMENSIONS).
func BenchmarkRecallVectors(b *testing.B) {
	for _, dims := range []int{1536, 256} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) { benchRecallVectors(b, dims) })
	}
}

func benchRecallVectors(b *testing.B, dims int) {
	db := storetest.MustOpenSQLite(b)
	const user = "telegram:1"
	benchCorpus(b, db, user, 5_000)
	s := store.NewMemoryStore(db)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		return v
	}
	rows, err := db.SQL().QueryContext(ctx, "SELECT id FROM memories WHERE user_key = ?", user)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if err := s.SetEmbedding(ctx, id, vec()); err != nil {
			b.Fatal(err)
		}
	}
	f := kairos.MemoryFilter{UserKey: user, Query: "work meeting", QueryVector: vec(), Limit: 10}
	durs := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if _, err := s.RecallMemories(ctx, f); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	reportPercentiles(b, durs)
}

func reportPercentiles(b *testing.B, durs []time.Duration) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
	b.ReportMetric(ms(durs[len(durs)*95/100]), "p95-ms")
}
