package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
)

// Recall: the filter, the lexical and vector candidates and their ranking
// (see MemoryStore for the scoring).

// cosine returns the cosine similarity of q and the encoded vector b, and
// false when b is missing or of another dimension.
func cosine(q []float32, qnorm float64, b []byte) (float64, bool) {
	if len(b) != 4*len(q) || qnorm == 0 {
		return 0, false
	}
	var dot, norm float64
	for i, x := range q {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		dot += float64(x) * v
		norm += v * v
	}
	if norm == 0 {
		return 0, false
	}
	return dot / (qnorm * math.Sqrt(norm)), true
}

// filterSQL is the WHERE clause of a filter over "memories AS m".
func filterSQL(f kairos.MemoryFilter) (string, []any) {
	where := []string{"m.user_key = ?"}
	args := []any{f.UserKey}
	if f.Store != "" {
		where = append(where, "m.store = ?")
		args = append(args, f.Store)
	}
	var kinds []string
	if len(f.Categories) > 0 {
		kinds = append(kinds, "(m.store = ? AND m.type IN ?)")
		args = append(args, kairos.StoreUserMemory, f.Categories)
	}
	if len(f.SummaryTypes) > 0 {
		kinds = append(kinds, "(m.store = ? AND m.type IN ?)")
		args = append(args, kairos.StoreSummaries, f.SummaryTypes)
	}
	if len(kinds) > 0 {
		where = append(where, "("+strings.Join(kinds, " OR ")+")")
	}
	if f.From != nil {
		where = append(where, "m.span_end >= ?")
		args = append(args, ms(*f.From))
	}
	if f.To != nil {
		where = append(where, "m.span_start <= ?")
		args = append(args, ms(*f.To))
	}
	if p := dropNUL(f.PeriodKeyPrefix); p != "" {
		where = append(where, `m.period_key LIKE ? ESCAPE '\'`)
		args = append(args, likeEscaper.Replace(p)+"%")
	}
	return strings.Join(where, " AND "), slices.Clip(args)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// RecallMemories returns the user's memories that match the filter: by
// relevance to f.Query (see MemoryStore), or by recency (most recently
// updated first) when the query is empty. A query with no searchable
// words matches nothing.
func (s *MemoryStore) RecallMemories(ctx context.Context, f kairos.MemoryFilter) ([]*kairos.Memory, error) {
	if f.UserKey == "" {
		return nil, kairos.Errorf(kairos.EINVALID, "recall needs the user")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = MemoryDefaultLimit
	}
	limit = min(limit, MemoryMaxLimit)
	where, args := filterSQL(f)
	if strings.TrimSpace(f.Query) == "" {
		return s.recentMemories(ctx, where, args, limit)
	}
	cols := memoryCols
	withVec := len(f.QueryVector) > 0
	if withVec {
		cols += ", m.embedding"
	}
	cands, err := s.lexicalCandidates(ctx, f, cols, where, args, max(4*limit, 40))
	if err != nil {
		return nil, err
	}
	var qnorm float64
	for _, x := range f.QueryVector {
		qnorm += float64(x) * float64(x)
	}
	qnorm = math.Sqrt(qnorm)
	if withVec {
		semantic, err := s.vectorCandidates(ctx, f, qnorm, where, args, cands, max(4*limit, 40))
		if err != nil {
			return nil, fmt.Errorf("recall memories by vector: %w", err)
		}
		cands = append(cands, semantic...)
	}
	return rankMemories(f, qnorm, cands, limit), nil
}

// recentMemories lists the memories matching where, most recently updated
// first.
func (s *MemoryStore) recentMemories(ctx context.Context, where string, args []any, limit int) ([]*kairos.Memory, error) {
	var rows []memoryRow
	err := s.gdb(ctx).Raw("SELECT "+memoryCols+" FROM memories AS m WHERE "+where+
		" ORDER BY m.updated_at DESC, m.seq DESC LIMIT ?", append(args, limit)...).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	out := make([]*kairos.Memory, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// lexicalCandidates returns the n memories matching where that best match
// the query's words (none when it has no searchable word), each with its
// lexical score in Lex: PostgreSQL's ts_rank or SQLite's bm25.
func (s *MemoryStore) lexicalCandidates(ctx context.Context, f kairos.MemoryFilter, cols, where string, args []any, n int) ([]memoryRow, error) {
	terms := QueryTerms(f.Query)
	if len(terms) == 0 {
		return nil, nil
	}
	var cands []memoryRow
	var err error
	if s.db.dialect == DialectPostgres {
		// Weights {D, C, B, A}: tags (A) count twice as much as
		// content (B), as in the SQLite ranking.
		q := "SELECT " + cols + ", ts_rank('{0.1, 0.2, 0.5, 1.0}', m.tsv, q.q) AS lex FROM memories AS m, to_tsquery('english', ?) AS q(q)" +
			" WHERE m.tsv @@ q.q AND " + where + " ORDER BY lex DESC, m.updated_at DESC LIMIT ?"
		err = s.gdb(ctx).Raw(q, append(append([]any{PostgresTSQuery(terms)}, args...), n)...).Scan(&cands).Error
	} else {
		cands, err = s.recallSQLite(ctx, f, terms, cols, where, args, n)
	}
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	return cands, nil
}

// rankMemories orders the candidates by relevance: the lexical score
// scaled to the best one, blended with the cosine to the query vector when
// there is one (a candidate with neither a word nor MemoryMinCosine is
// dropped); ties go to the most recently updated. It keeps limit.
func rankMemories(f kairos.MemoryFilter, qnorm float64, cands []memoryRow, limit int) []*kairos.Memory {
	withVec := len(f.QueryVector) > 0
	maxLex := 0.0
	for _, c := range cands {
		maxLex = max(maxLex, c.Lex)
	}
	type ranked struct {
		row *memoryRow
		rel float64
	}
	var out []ranked
	for i := range cands {
		c := &cands[i]
		lex := 0.0
		if maxLex > 0 && c.Lex > 0 {
			lex = c.Lex / maxLex
		}
		rel := lex
		if withVec {
			if cos, ok := cosine(f.QueryVector, qnorm, c.Embedding); ok {
				if lex == 0 && cos < MemoryMinCosine {
					continue
				}
				rel = lexWeight*lex + (1-lexWeight)*max(cos, 0)
			} else if lex == 0 {
				continue
			}
		}
		out = append(out, ranked{c, rel})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].rel != out[j].rel {
			return out[i].rel > out[j].rel
		}
		if out[i].row.UpdatedAt != out[j].row.UpdatedAt {
			return out[i].row.UpdatedAt > out[j].row.UpdatedAt
		}
		return out[i].row.Seq > out[j].row.Seq
	})
	if len(out) > limit {
		out = out[:limit]
	}
	mems := make([]*kairos.Memory, len(out))
	for i, r := range out {
		mems[i] = r.row.domain()
		mems[i].Relevance = r.rel
	}
	return mems
}

// vectorCandidates streams the embeddings of the MemoryVectorScan most
// recently updated memories that match the filter (without copying them),
// keeps the n most similar ones that reach MemoryMinCosine and are not in
// have already, and loads their rows (with the embedding, for ranking).
func (s *MemoryStore) vectorCandidates(ctx context.Context, f kairos.MemoryFilter, qnorm float64, where string, args []any, have []memoryRow, n int) ([]memoryRow, error) {
	seen := make(map[int64]bool, len(have))
	for _, c := range have {
		seen[c.Seq] = true
	}
	rows, err := s.gdb(ctx).Raw("SELECT m.seq, m.embedding FROM memories AS m WHERE "+where+
		" AND m.embedding IS NOT NULL ORDER BY m.updated_at DESC LIMIT ?", append(args, MemoryVectorScan)...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type hit struct {
		seq int64
		cos float64
	}
	var hits []hit
	for rows.Next() {
		var (
			seq int64
			emb sql.RawBytes
		)
		if err := rows.Scan(&seq, &emb); err != nil {
			return nil, err
		}
		if seen[seq] {
			continue
		}
		if cos, ok := cosine(f.QueryVector, qnorm, emb); ok && cos >= MemoryMinCosine {
			hits = append(hits, hit{seq, cos})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].cos > hits[j].cos })
	if len(hits) > n {
		hits = hits[:n]
	}
	if len(hits) == 0 {
		return nil, nil
	}
	seqs := make([]int64, len(hits))
	for i, h := range hits {
		seqs[i] = h.seq
	}
	var out []memoryRow
	err = s.gdb(ctx).Raw("SELECT "+memoryCols+", m.embedding FROM memories AS m WHERE m.user_key = ? AND m.seq IN ?", f.UserKey, seqs).Scan(&out).Error
	return out, err
}

// MemoryFTSBudget bounds how many full-text matches one SQLite recall
// scores with bm25 (the cost of recall grows with it, about 0.6 µs each).
const MemoryFTSBudget = 2000

// hasMemories reports whether the user has any memory: a user with none
// (every new user) costs one index probe, not a full-text search over
// everyone's memories.
func (s *MemoryStore) hasMemories(ctx context.Context, userKey string) (bool, error) {
	var has bool
	err := s.db.queryRow(ctx, "SELECT EXISTS (SELECT 1 FROM memories WHERE user_key = ?)", userKey).Scan(&has)
	return has, err
}

// recallSQLite returns up to n full-text candidates ranked by bm25. When
// the query matches more than MemoryFTSBudget of the user's memories
// (common words over a large history), it scores, instead of all of them,
// (1) every match of the query's rarer terms — those with at most
// MemoryFTSBudget/2 matches, rarest first while their total stays within
// 2×MemoryFTSBudget — scored on those terms alone, and (2) the
// MemoryFTSBudget most recent matches of the whole query (the user's own
// most recent ones when other users' crowd them out). A memory found
// by both keeps the higher score.
func (s *MemoryStore) recallSQLite(ctx context.Context, f kairos.MemoryFilter, terms []string, cols, where string, args []any, n int) ([]memoryRow, error) {
	if has, err := s.hasMemories(ctx, f.UserKey); err != nil || !has {
		return nil, err
	}
	text := SQLiteMatch
	full := text(terms)
	count, err := s.ftsCount(ctx, full, MemoryFTSBudget+1)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, nil // no memory of anyone has the words: nothing to rank
	}
	if count <= MemoryFTSBudget {
		return s.ftsRank(ctx, f, full, 0, cols, where, args, n)
	}
	rareTerms, err := s.rareTerms(ctx, terms)
	if err != nil {
		return nil, err
	}
	best := map[int64]memoryRow{}
	var order []int64
	keep := func(rows []memoryRow) {
		for _, r := range rows {
			old, ok := best[r.Seq]
			if !ok {
				order = append(order, r.Seq)
			}
			if !ok || r.Lex > old.Lex {
				best[r.Seq] = r
			}
		}
	}
	if len(rareTerms) > 0 {
		rows, err := s.ftsRank(ctx, f, text(rareTerms), 0, cols, where, args, n)
		if err != nil {
			return nil, err
		}
		keep(rows)
	}
	var bound int64
	err = s.gdb(ctx).Raw("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
		full, MemoryFTSBudget-1).Scan(&bound).Error
	if err != nil {
		return nil, err
	}
	rows, err := s.ftsRank(ctx, f, full, bound, cols, where, args, n)
	if err != nil {
		return nil, err
	}
	if len(rows) < n && bound > 0 {
		// Other users' newer matches crowded this user's out of the
		// window: take the user's own MemoryFTSBudget most recent
		// matches instead (slower: it walks the matches through the
		// join). No such row (fewer matches) leaves own 0: all of them.
		var own int64
		err = s.gdb(ctx).Raw("SELECT memories_fts.rowid FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid"+
			" WHERE memories_fts MATCH ? AND m.user_key = ? ORDER BY memories_fts.rowid DESC LIMIT 1 OFFSET ?",
			full, f.UserKey, MemoryFTSBudget-1).Scan(&own).Error
		if err != nil {
			return nil, err
		}
		if own < bound {
			if rows, err = s.ftsRank(ctx, f, full, own, cols, where, args, n); err != nil {
				return nil, err
			}
		}
	}
	keep(rows)
	out := make([]memoryRow, 0, len(order))
	for _, seq := range order {
		out = append(out, best[seq])
	}
	return out, nil
}

// rareTerms are the query's terms with at most MemoryFTSBudget/2
// full-text matches each, rarest first while their matches total at most
// 2×MemoryFTSBudget.
func (s *MemoryStore) rareTerms(ctx context.Context, terms []string) ([]string, error) {
	type termCount struct {
		term  string
		count int
	}
	var rare []termCount
	for _, t := range terms {
		c, err := s.ftsCount(ctx, SQLiteMatch([]string{t}), MemoryFTSBudget/2+1)
		if err != nil {
			return nil, err
		}
		if c <= MemoryFTSBudget/2 {
			rare = append(rare, termCount{t, c})
		}
	}
	sort.SliceStable(rare, func(i, j int) bool { return rare[i].count < rare[j].count })
	var out []string
	total := 0
	for _, r := range rare {
		if total+r.count > 2*MemoryFTSBudget {
			break
		}
		total += r.count
		out = append(out, r.term)
	}
	return out, nil
}

// ftsCount counts the matches of an FTS5 expression, stopping at limit.
func (s *MemoryStore) ftsCount(ctx context.Context, match string, limit int) (int, error) {
	var n int
	err := s.gdb(ctx).Raw("SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)", match, limit).Scan(&n).Error
	return n, err
}

// ftsRank returns the n best matches of an FTS5 expression with rowid ≥
// minRowid, joined to their rows and filtered by where. When the filter
// is the user alone, the ranking runs in the FTS table and joins only the
// best 4n; should other users' memories crowd those out, or when the
// filter has more conditions, it joins every match so that the filter
// applies before the limit.
func (s *MemoryStore) ftsRank(ctx context.Context, f kairos.MemoryFilter, match string, minRowid int64, cols, where string, args []any, n int) ([]memoryRow, error) {
	var rows []memoryRow
	userOnly := f.Store == "" && len(f.Categories) == 0 && len(f.SummaryTypes) == 0 && f.From == nil && f.To == nil && f.PeriodKeyPrefix == ""
	if userOnly {
		inner := 4 * n
		q := "SELECT " + cols + ", r.lex AS lex FROM (SELECT rowid AS rid, -bm25(memories_fts, 1.0, 2.0) AS lex FROM memories_fts" +
			" WHERE memories_fts MATCH ? AND rowid >= ? ORDER BY lex DESC LIMIT ?) AS r JOIN memories AS m ON m.seq = r.rid" +
			" WHERE " + where + " ORDER BY r.lex DESC, m.updated_at DESC LIMIT ?"
		err := s.gdb(ctx).Raw(q, append(append([]any{match, minRowid, inner}, args...), n)...).Scan(&rows).Error
		if err != nil {
			return nil, err
		}
		if len(rows) == n {
			return rows, nil
		}
		var matched int
		if err := s.gdb(ctx).Raw("SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid >= ? LIMIT ?)",
			match, minRowid, inner+1).Scan(&matched).Error; err != nil {
			return nil, err
		}
		if matched <= inner {
			return rows, nil // every match was ranked
		}
		rows = nil
	}
	q := "SELECT " + cols + ", -bm25(memories_fts, 1.0, 2.0) AS lex FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid" +
		" WHERE memories_fts MATCH ? AND memories_fts.rowid >= ? AND " + where + " ORDER BY lex DESC, m.updated_at DESC LIMIT ?"
	err := s.gdb(ctx).Raw(q, append(append([]any{match, minRowid}, args...), n)...).Scan(&rows).Error
	return rows, err
}

// stopWords are dropped from queries (unless nothing else is left): they
// match most memories and only slow the ranking down.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from
		had has have he her his how i if in into is it its me my of on or our she so than that the their
		them then there these they this those to us was we were what when where which who whom why will
		with would you your`) {
		stopWords[w] = true
	}
}

// QueryTerms splits a user's query into search terms: runs of letters,
// digits and combining marks, lower-cased, without duplicates and (when
// other words remain) without English stop words, at most MemoryMaxTerms
// of at most 64 bytes. Punctuation, quotes and FTS operators (AND, OR,
// NEAR, *, ^, :) are never passed through as syntax: see SQLiteMatch.
func QueryTerms(q string) []string {
	var terms, stops []string
	seen := map[string]bool{}
	add := func(t string) {
		if t == "" || seen[t] {
			return
		}
		seen[t] = true
		if stopWords[t] {
			stops = append(stops, t)
		} else {
			terms = append(terms, t)
		}
	}
	var b strings.Builder
	for _, r := range q {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) {
			if b.Len()+utf8.RuneLen(r) <= 64 {
				b.WriteRune(unicode.ToLower(r))
			}
			continue
		}
		add(b.String())
		b.Reset()
	}
	add(b.String())
	if len(terms) == 0 {
		terms = stops
	}
	if len(terms) > MemoryMaxTerms {
		terms = terms[:MemoryMaxTerms]
	}
	return terms
}

// SQLiteMatch is an FTS5 MATCH expression that finds any of the terms:
// each is a quoted string ("…", inner quotes doubled), so that nothing in
// it is read as FTS5 syntax, and they are joined with OR.
func SQLiteMatch(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " OR ")
}

// PostgresTSQuery is a to_tsquery text that finds any of the terms: each
// is a quoted lexeme ('…', inner quotes and backslashes escaped), joined
// with |.
func PostgresTSQuery(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		t = strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t)
		quoted[i] = "'" + t + "'"
	}
	return strings.Join(quoted, " | ")
}
