package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/store"
	"github.com/kairos-agent/kairos/store/storetest"
)

const (
	alice = "telegram:1001"
	bob   = "telegram:2002"
)

var memT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func intp(v int) *int { return &v }

// seedMemories stores ms for their users and returns them by the name in
// their first tag.
func seedMemories(t testing.TB, s *store.MemoryStore, ms []*kairos.Memory) map[string]*kairos.Memory {
	t.Helper()
	out := map[string]*kairos.Memory{}
	for i, m := range ms {
		if m.CreatedAt.IsZero() {
			m.CreatedAt = memT0.Add(time.Duration(i) * time.Minute)
		}
		got, merged, err := s.StoreMemory(context.Background(), m)
		if err != nil {
			t.Fatalf("StoreMemory(%q): %v", m.Content, err)
		}
		if merged {
			t.Fatalf("StoreMemory(%q) merged unexpectedly", m.Content)
		}
		out[m.Tags[0]] = got
	}
	return out
}

func aliceMemories() []*kairos.Memory {
	um := func(cat, content string, tags ...string) *kairos.Memory {
		return &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: cat, Content: content, Tags: tags}
	}
	sum := func(typ, key, content string, tags ...string) *kairos.Memory {
		return &kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: typ, PeriodKey: key, Content: content, Tags: tags}
	}
	return []*kairos.Memory{
		um("fact", "Alice's sister Maria lives in Lisbon and her birthday is on June 14.", "sister", "family"),
		um("preference", "Prefers oat milk in coffee; dislikes dairy.", "coffee"),
		um("life-goal", "Wants to run a marathon before turning 40.", "marathon", "running"),
		um("project", "Building a greenhouse in the back garden: foundation done, glazing next.", "greenhouse"),
		um("open-loop", "Needs to book a dentist appointment for the cracked molar.", "dentist"),
		um("relationship", "Works closely with Tomasz on the payments migration at work.", "tomasz"),
		um("health", "Allergic to penicillin; carries an EpiPen for wasp stings.", "allergy"),
		um("work", "Team lead at a logistics company; stand-up every day at 09:30.", "job"),
		um("personal-context", "Has two cats named Pixel and Byte.", "cats"),
		um("fact", "Drives a 2019 electric Kia Niro.", "car"),
		sum(kairos.SummaryDaily, "2026-02-27", "Talked about the greenhouse glazing quotes and picked polycarbonate.", "daily-0227"),
		sum(kairos.SummaryWeekly, "2026-W09", "Week: marathon training plan drafted, long runs on Sundays.", "weekly-w09"),
		sum(kairos.SummaryMonthly, "2026-02", "February: greenhouse foundation, dentist still not booked, cat vet visit.", "monthly-02"),
		sum(kairos.SummaryQuarterly, "2025-Q4", "Q4 2025: changed teams at work, started running again.", "quarterly-q4"),
		sum(kairos.SummaryYearly, "2025", "2025: moved flat, adopted Pixel and Byte, first half marathon.", "yearly-2025"),
		sum(kairos.SummaryConversation, "2026-03-01", "Conversation about wasp sting first aid and the EpiPen.", "conv-0301"),
	}
}

func TestRecallRanking(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	mem := seedMemories(t, s, aliceMemories())
	tests := []struct {
		query string
		first string // the first tag of the memory that must rank first
	}{
		{"When is my sister's birthday?", "sister"},
		{"what milk do I take in coffee", "coffee"},
		{"marathon", "marathon"},
		{"greenhouse progress", "greenhouse"},
		{"dentist", "dentist"},
		{"who is Tomasz", "tomasz"},
		{"penicillin allergy", "allergy"},
		{"cats names", "cats"},
		{"what car do I drive", "car"},
		{"polycarbonate glazing quotes", "daily-0227"},
		{"long runs training plan", "weekly-w09"},
		{"half marathon 2025", "yearly-2025"},
		{"wasp sting first aid", "conv-0301"}, // the health fact mentions wasp stings too
		{"running", "marathon"},               // porter stemming: "run" and "running"
		{"LISBON", "sister"},                  // case-insensitive
		{"Lisbôa lisbon!!", "sister"},         // punctuation and diacritics
		{"stand-up at 09:30", "job"},          // hyphen and colon are not syntax
		{"family", "sister"},                  // tags are searched
		{"the", "work-free-nothing-matches"},  // only stop words: matches "the" literally
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			if tc.first == "work-free-nothing-matches" {
				// "the" appears in some contents; it must not error and
				// results must still be ranked with relevance in (0, 1].
				for _, m := range got {
					if m.Relevance <= 0 || m.Relevance > 1 {
						t.Errorf("relevance %v out of (0,1]", m.Relevance)
					}
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("no results; want %q first", tc.first)
			}
			if want := mem[tc.first]; got[0].ID != want.ID {
				t.Errorf("first = %q, want %q", got[0].Content, want.Content)
			}
			if got[0].Relevance != 1 {
				t.Errorf("top relevance = %v, want 1", got[0].Relevance)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Relevance > got[i-1].Relevance {
					t.Errorf("not sorted by relevance at %d: %v > %v", i, got[i].Relevance, got[i-1].Relevance)
				}
			}
		})
	}
}

func TestRecallFilters(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	mem := seedMemories(t, s, aliceMemories())
	tags := func(ms []*kairos.Memory) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Tags[0])
		}
		slices.Sort(out)
		return out
	}
	ts := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	tests := []struct {
		name string
		f    kairos.MemoryFilter
		want []string
	}{
		{"store user_memory", kairos.MemoryFilter{Query: "greenhouse", Store: kairos.StoreUserMemory}, []string{"greenhouse"}},
		{"store summaries", kairos.MemoryFilter{Query: "greenhouse", Store: kairos.StoreSummaries}, []string{"daily-0227", "monthly-02"}},
		{"categories", kairos.MemoryFilter{Query: "logistics payments greenhouse", Categories: []string{"work", "relationship"}}, []string{"job", "tomasz"}},
		{"summary types", kairos.MemoryFilter{Query: "greenhouse", SummaryTypes: []string{kairos.SummaryMonthly}}, []string{"monthly-02"}},
		{"categories or summary types", kairos.MemoryFilter{Query: "greenhouse", Categories: []string{"project"}, SummaryTypes: []string{kairos.SummaryDaily}}, []string{"daily-0227", "greenhouse"}},
		{"period prefix month", kairos.MemoryFilter{Store: kairos.StoreSummaries, PeriodKeyPrefix: "2026-02"}, []string{"daily-0227", "monthly-02"}},
		{"period prefix week", kairos.MemoryFilter{PeriodKeyPrefix: "2026-W09"}, []string{"weekly-w09"}},
		{"period prefix with LIKE wildcards", kairos.MemoryFilter{PeriodKeyPrefix: "2026_%"}, nil},
		{"from/to overlap periods", kairos.MemoryFilter{Store: kairos.StoreSummaries, From: ts("2026-02-25T00:00:00Z"), To: ts("2026-02-28T00:00:00Z")},
			[]string{"daily-0227", "monthly-02", "weekly-w09"}},
		{"to before all", kairos.MemoryFilter{To: ts("2024-12-31T23:59:59Z")}, nil},
		{"from user memories by creation", kairos.MemoryFilter{Store: kairos.StoreUserMemory, From: ts("2026-03-02T09:08:00Z")}, []string{"car", "cats"}},
		{"limit", kairos.MemoryFilter{Store: kairos.StoreUserMemory, Limit: 2}, []string{"car", "cats"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.UserKey = alice
			got, err := s.RecallMemories(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if g := tags(got); !slices.Equal(g, tc.want) {
				t.Errorf("got %v, want %v", g, tc.want)
			}
		})
	}

	// Without a query the order is by recency, newest first.
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Store: kairos.StoreUserMemory})
	if err != nil || len(got) != 10 {
		t.Fatalf("list = %d, %v", len(got), err)
	}
	if got[0].ID != mem["car"].ID || got[9].ID != mem["sister"].ID || got[0].Relevance != 0 {
		t.Errorf("list order: first %q, last %q", got[0].Content, got[9].Content)
	}
}

func TestMemoryIsolation(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	a, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "health", Content: "Alice is allergic to peanuts."})
	if err != nil {
		t.Fatal(err)
	}
	b, merged, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: bob, Store: kairos.StoreUserMemory, Type: "health", Content: "Alice is allergic to peanuts."})
	if err != nil || merged || b.ID == a.ID {
		t.Fatalf("Bob's identical memory: merged=%v id=%s (alice %s) err=%v", merged, b.ID, a.ID, err)
	}
	if _, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: bob, Store: kairos.StoreSummaries, Type: kairos.SummaryDaily, PeriodKey: "2026-03-02", Content: "Bob's day: peanuts at the office."}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []kairos.MemoryFilter{
		{UserKey: alice, Query: "peanuts"},
		{UserKey: alice},
		{UserKey: alice, PeriodKeyPrefix: "2026"},
		{UserKey: alice, Query: "peanuts", QueryVector: []float32{1, 0}},
	} {
		got, err := s.RecallMemories(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if m.UserKey != alice || m.ID == b.ID {
				t.Errorf("filter %+v returned another user's memory %+v", f, m)
			}
		}
	}
	if _, err := s.FindMemory(ctx, alice, b.ID); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("FindMemory of Bob's memory as Alice = %v, want ENOTFOUND", err)
	}
	if err := s.ForgetMemory(ctx, alice, b.ID); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("ForgetMemory of Bob's memory as Alice = %v, want ENOTFOUND", err)
	}
	if _, err := s.FindMemory(ctx, bob, b.ID); err != nil {
		t.Errorf("Bob's memory gone after Alice's forget attempt: %v", err)
	}
	if _, err := s.RecallMemories(ctx, kairos.MemoryFilter{Query: "peanuts"}); kairos.ErrorCode(err) != kairos.EINVALID {
		t.Errorf("recall without a user = %v, want EINVALID", err)
	}
}

func TestMemoryMerge(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	first, merged, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact",
		Content: "Alice's favourite colour is green.", Tags: []string{"colour", "Likes"}, CreatedAt: memT0})
	if err != nil || merged {
		t.Fatalf("first store: merged=%v err=%v", merged, err)
	}
	again, merged, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "preference",
		Content: "  alice's FAVOURITE colour is green!! ", Tags: []string{"likes", "green"}, PursuingPriority: intp(100), CreatedAt: memT0.Add(time.Hour)})
	if err != nil || !merged {
		t.Fatalf("second store: merged=%v err=%v", merged, err)
	}
	if again.ID != first.ID || !again.CreatedAt.Equal(memT0) || !again.UpdatedAt.Equal(memT0.Add(time.Hour)) {
		t.Errorf("merged memory = %+v; want id %s created %s updated +1h", again, first.ID, memT0)
	}
	if again.Type != "preference" || !slices.Equal(again.Tags, []string{"colour", "Likes", "green"}) || again.PursuingPriority == nil || *again.PursuingPriority != 100 {
		t.Errorf("merged fields: type %q tags %v priority %v", again.Type, again.Tags, again.PursuingPriority)
	}
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice})
	if err != nil || len(got) != 1 {
		t.Fatalf("after merge %d memories (%v), want 1", len(got), err)
	}

	// Summaries merge on type + period + chat; the content is replaced and
	// the full-text index follows.
	day := func(content, chat string) (*kairos.Memory, bool) {
		m, merged, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: kairos.SummaryConversation,
			PeriodKey: "2026-03-02", ChatID: chat, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return m, merged
	}
	s1, m1 := day("Discussed kayaks.", "session-1")
	if err := s.SetEmbedding(ctx, s1.ID, []float32{1, 0, 0}); err != nil {
		t.Fatal(err)
	}
	s2, m2 := day("Discussed canoes instead.", "session-1")
	s3, m3 := day("Another chat about kayaks.", "session-2")
	if m1 || !m2 || m3 || s2.ID != s1.ID || s3.ID == s1.ID {
		t.Fatalf("summary merges: %v %v %v ids %s %s %s", m1, m2, m3, s1.ID, s2.ID, s3.ID)
	}
	for q, want := range map[string][]string{"canoes": {s1.ID}, "kayaks": {s3.ID}} {
		got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range got {
			ids = append(ids, m.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("recall %q = %v, want %v", q, ids, want)
		}
	}
	// The old embedding described the old content: it is dropped.
	got, err = s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "nothingmatches", QueryVector: []float32{1, 0, 0}})
	if err != nil || len(got) != 0 {
		t.Errorf("stale embedding still used: %d results, %v", len(got), err)
	}
}

func TestMemoryConcurrentMerge(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact",
				Content: "Same fact stored by many turns.", Tags: []string{fmt.Sprintf("t%d", i)}})
			errs[i] = err
			if m != nil {
				ids[i] = m.ID
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("store %d: id %s (want %s), err %v", i, ids[i], ids[0], errs[i])
		}
	}
	m, err := s.FindMemory(ctx, alice, ids[0])
	if err != nil || len(m.Tags) != 8 {
		t.Errorf("merged tags = %v, %v; want 8", m.Tags, err)
	}
}

func TestForgetMemory(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	mem := seedMemories(t, s, aliceMemories())
	id := mem["dentist"].ID
	if err := s.ForgetMemory(ctx, alice, id); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetMemory(ctx, alice, id); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("second forget = %v, want ENOTFOUND", err)
	}
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "dentist molar", Store: kairos.StoreUserMemory})
	if err != nil || len(got) != 0 {
		t.Errorf("forgotten memory recalled: %d, %v", len(got), err)
	}
	if err := s.SetEmbedding(ctx, id, []float32{1}); kairos.ErrorCode(err) != kairos.ENOTFOUND {
		t.Errorf("SetEmbedding of forgotten = %v", err)
	}
}

func TestRecallWithVectors(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	mem := seedMemories(t, s, aliceMemories())
	vec := map[string][]float32{
		"sister":     {1, 0, 0, 0},
		"coffee":     {0, 1, 0, 0},
		"marathon":   {0, 0, 1, 0},
		"weekly-w09": {0, 0, 0.8, 0.6},
		"cats":       {0.1, 0.1, 0.1, 0.9},
	}
	for tag, v := range vec {
		if err := s.SetEmbedding(ctx, mem[tag].ID, v); err != nil {
			t.Fatal(err)
		}
	}
	// "jogging" shares no word with any memory: only the vector finds
	// the marathon goal and the training summary.
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "jogging", QueryVector: []float32{0, 0, 1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != mem["marathon"].ID || got[1].ID != mem["weekly-w09"].ID {
		t.Fatalf("semantic-only recall = %v", contents(got))
	}
	if got[0].Relevance != 0.5 || got[1].Relevance < 0.39 || got[1].Relevance > 0.41 {
		t.Errorf("relevances %v, %v; want 0.5·cos = 0.5 and 0.4", got[0].Relevance, got[1].Relevance)
	}
	// Lexical and semantic agree → the blend puts the marathon goal first
	// even though the weekly summary matches "long runs" by text too.
	got, err = s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "marathon long runs", QueryVector: []float32{0, 0, 1, 0}})
	if err != nil || len(got) == 0 || got[0].ID != mem["marathon"].ID {
		t.Fatalf("blended recall = %v, %v", contents(got), err)
	}
	// A vector of another dimension is ignored rather than failing.
	got, err = s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "coffee", QueryVector: []float32{1, 2}})
	if err != nil || len(got) != 1 || got[0].ID != mem["coffee"].ID {
		t.Errorf("mismatched vector recall = %v, %v", contents(got), err)
	}
}

func contents(ms []*kairos.Memory) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%.3f %s", m.Relevance, m.Content))
	}
	return out
}

func TestStoreMemoryValidation(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	tests := []struct {
		name string
		m    kairos.Memory
	}{
		{"no user", kairos.Memory{Store: kairos.StoreUserMemory, Type: "fact", Content: "x"}},
		{"no content", kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact", Content: "  "}},
		{"bad store", kairos.Memory{UserKey: alice, Store: "long", Type: "fact", Content: "x"}},
		{"bad category", kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "system", Content: "x"}},
		{"priority", kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact", Content: "x", PursuingPriority: intp(101)}},
		{"period on user memory", kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact", Content: "x", PeriodKey: "2026"}},
		{"bad summary type", kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: "fact", PeriodKey: "2026", Content: "x"}},
		{"missing period", kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: kairos.SummaryYearly, Content: "x"}},
		{"period of another type", kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: kairos.SummaryWeekly, PeriodKey: "2026-03", Content: "x"}},
		{"week 53 of a 52-week year", kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: kairos.SummaryWeekly, PeriodKey: "2025-W53", Content: "x"}},
		{"February 30", kairos.Memory{UserKey: alice, Store: kairos.StoreSummaries, Type: kairos.SummaryDaily, PeriodKey: "2026-02-30", Content: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.StoreMemory(ctx, &tc.m)
			if kairos.ErrorCode(err) != kairos.EINVALID {
				t.Errorf("StoreMemory = %v, want EINVALID", err)
			}
		})
	}
}

// hostileQueries are strings that are FTS5 or tsquery syntax, or break
// naive quoting.
var hostileQueries = []string{
	`"`, `""`, `"unbalanced`, `'`, `''`, `\`, `\"`, `*`, `^`, `:`, `-`, `+`, `(`, `)`, `()`, `{}`, `[`, `!`,
	`AND`, `OR`, `NOT`, `NEAR`, `near/3`, `a AND`, `OR b`, `NOT NOT`, `NEAR(a b, 2)`, `a NEAR/2 b`,
	`content:dentist`, `tags : x`, `{content tags}: x`, `^dentist`, `dent*`, `* dentist`, `dentist"*`,
	`"dentist" OR "' OR 1=1 --`, `'); DROP TABLE memories; --`, `a & b | !c`, `a <-> b`, `a:*`, `:*`, `!!`,
	"\x00", "dentist\x00molar", "\u200b", "emoji 🦷 tooth", "日本語のテキスト", "ǅemal", strings.Repeat("x", 10000),
	strings.Repeat("a ", 500), `%`, `_`, `%_%`,
}

func TestRecallHostileQueries(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemoryStore(storetest.MustOpenDB(t))
	seedMemories(t, s, aliceMemories())
	for _, q := range hostileQueries {
		for _, vec := range [][]float32{nil, {1, 0}} {
			if _, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: q, QueryVector: vec, PeriodKeyPrefix: q}); err != nil {
				t.Errorf("RecallMemories(%q): %v", q, err)
			}
		}
	}
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: `content:dentist`})
	if err != nil || len(got) == 0 || !strings.Contains(got[0].Content, "dentist") {
		t.Errorf(`"content:dentist" should search for the words: %v, %v`, contents(got), err)
	}
}

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"When is my sister's birthday?", []string{"sister", "s", "birthday"}},
		{"the a of", []string{"the", "a", "of"}},
		{`"dentist" OR NEAR(x*)`, []string{"dentist", "near", "x"}},
		{"Ünïcödé straße 東京", []string{"ünïcödé", "straße", "東京"}},
		{"dup DUP Dup", []string{"dup"}},
		{"", nil},
		{"?!", nil},
	}
	for _, tc := range tests {
		if got := store.QueryTerms(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := store.SQLiteMatch([]string{"a", `b"c`}); got != `"a" OR "b""c"` {
		t.Errorf("SQLiteMatch = %s", got)
	}
	if got := store.PostgresTSQuery([]string{"a", `b'c\`}); got != `'a' | 'b''c\\'` {
		t.Errorf("PostgresTSQuery = %s", got)
	}
}

// FuzzRecallQuery runs fuzzed queries against a real database: the
// sanitiser must never let a query fail.
func FuzzRecallQuery(f *testing.F) {
	for _, q := range hostileQueries {
		f.Add(q)
	}
	db := storetest.MustOpenDB(f)
	s := store.NewMemoryStore(db)
	seedMemories(f, s, aliceMemories())
	f.Fuzz(func(t *testing.T, q string) {
		terms := store.QueryTerms(q)
		if len(terms) > store.MemoryMaxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		for _, term := range terms {
			if term == "" || strings.ContainsAny(term, `"'*^:()`) {
				t.Fatalf("term %q from %q", term, q)
			}
		}
		if _, err := s.RecallMemories(context.Background(), kairos.MemoryFilter{UserKey: alice, Query: q}); err != nil {
			if errors.Is(err, context.Canceled) {
				return
			}
			t.Fatalf("RecallMemories(%q): %v", q, err)
		}
	})
}

// TestRecallOverBudget covers a query that matches more memories than one
// recall scores (store.MemoryFTSBudget): the rare term's old match must
// still win, and the common term's most recent matches fill the rest.
func TestRecallOverBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a few thousand memories")
	}
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	s := store.NewMemoryStore(db)
	put := func(i int, content string) *kairos.Memory {
		m, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact",
			Content: content, CreatedAt: memT0.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	zelda := put(0, "Had coffee with Zelda at the harbour.")
	var last *kairos.Memory
	for i := 1; i <= store.MemoryFTSBudget+100; i++ {
		last = put(i, fmt.Sprintf("Coffee note number %d.", i))
	}
	// Bob's memories share the table and the words.
	for i := range 50 {
		if _, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: bob, Store: kairos.StoreUserMemory, Type: "fact",
			Content: fmt.Sprintf("Bob's coffee with Zelda, take %d.", i), CreatedAt: memT0.Add(time.Duration(5000+i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "zelda coffee", Limit: 5})
	if err != nil || len(got) != 5 {
		t.Fatalf("recall = %v, %v", contents(got), err)
	}
	if got[0].ID != zelda.ID {
		t.Errorf("first = %q, want the Zelda memory", got[0].Content)
	}
	for _, m := range got {
		if m.UserKey != alice {
			t.Errorf("another user's memory: %+v", m)
		}
	}
	got, err = s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "coffee", Limit: 3, Categories: []string{"fact"}})
	if err != nil || len(got) != 3 {
		t.Fatalf("recall coffee = %v, %v", contents(got), err)
	}
	found := false
	for _, m := range got {
		found = found || m.ID == last.ID || strings.Contains(m.Content, fmt.Sprint(store.MemoryFTSBudget+99))
	}
	if !found {
		t.Errorf("the most recent coffee notes should be among equally relevant matches: %v", contents(got))
	}
}

// TestRecallOverBudgetOtherUsers: the recent matches one recall scores
// are the user's own, so another user's newer memories with the same
// common word cannot crowd a user's matches out.
func TestRecallOverBudgetOtherUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a few thousand memories")
	}
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	s := store.NewMemoryStore(db)
	var mine []string
	for i := range 3 {
		m, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: alice, Store: kairos.StoreUserMemory, Type: "fact",
			Content: fmt.Sprintf("Coffee with the team, round %d.", i), CreatedAt: memT0.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, m.ID)
	}
	for i := range store.MemoryFTSBudget + 10 {
		if _, _, err := s.StoreMemory(ctx, &kairos.Memory{UserKey: bob, Store: kairos.StoreUserMemory, Type: "fact",
			Content: fmt.Sprintf("Bob's coffee, cup %d.", i), CreatedAt: memT0.Add(time.Duration(100+i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RecallMemories(ctx, kairos.MemoryFilter{UserKey: alice, Query: "coffee", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(mine) {
		t.Fatalf("recall = %v, want alice's %d coffee memories", contents(got), len(mine))
	}
}
