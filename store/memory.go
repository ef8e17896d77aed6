package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kairos-agent/kairos"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MemoryStore implements kairos.MemoryStore: the memory tool's user_memory
// and summaries, one user per row.
//
// Recall ranks by full-text relevance: SQLite FTS5's bm25 (content weight
// 1, tags weight 2; porter-stemmed, diacritics removed; bounded work on
// huge histories, see recallSQLite) or PostgreSQL's
// ts_rank over a generated tsvector (tags weighted A, content B). The raw
// score s (−bm25, or ts_rank) is normalized over the candidates to
// lex = s / max(s) ∈ (0, 1]. When the filter carries a query vector, each
// candidate with a stored embedding also gets sem = max(0, cos(query, v))
// and
//
//	relevance = 0.5·lex + 0.5·sem   (lex = 0 for semantic-only candidates)
//
// while a candidate without an embedding keeps relevance = lex. Candidates
// are the best 4×limit (at least 40) full-text matches plus, with a vector,
// the MemoryVectorScan most recently updated embedded memories that match
// the filters and reach cos ≥ MemoryMinCosine. Ties go to the most recently
// updated memory.
type MemoryStore struct{ db *DB }

var _ kairos.MemoryStore = (*MemoryStore)(nil)

// NewMemoryStore returns the memory repository of db.
func NewMemoryStore(db *DB) *MemoryStore { return &MemoryStore{db: db} }

// Tuning of recall.
const (
	MemoryDefaultLimit = 10
	MemoryMaxLimit     = 100
	// MemoryVectorScan bounds how many embedded memories a recall with a
	// query vector compares beyond the full-text candidates.
	MemoryVectorScan = 1000
	// MemoryMinCosine is the similarity a semantic-only candidate needs.
	MemoryMinCosine = 0.25
	// MemoryMaxTerms bounds the terms taken from a query.
	MemoryMaxTerms = 12
	// MemoryMaxTags bounds the tags kept on a memory.
	MemoryMaxTags = 20
	lexWeight     = 0.5
)

type memoryRow struct {
	Seq              int64 `gorm:"column:seq;primaryKey;autoIncrement"`
	ID               string
	UserKey          string
	Store            string
	Type             string
	Content          string
	Tags             string
	PursuingPriority *int
	PeriodKey        string
	ChatID           string
	MergeKey         string
	SpanStart        int64
	SpanEnd          int64
	Embedding        []byte
	Tainted          bool
	TaintSource      string
	CreatedAt        int64 `gorm:"autoCreateTime:false"`
	UpdatedAt        int64 `gorm:"autoUpdateTime:false"`
	// Lex is the full-text score of a recall query (read only).
	Lex float64 `gorm:"column:lex;->"`
}

func (memoryRow) TableName() string { return "memories" }

// memoryCols are the columns read back, without the embedding.
const memoryCols = "m.seq, m.id, m.user_key, m.store, m.type, m.content, m.tags, m.pursuing_priority, m.period_key, m.chat_id, m.merge_key, m.span_start, m.span_end, m.tainted, m.taint_source, m.created_at, m.updated_at"

func (r *memoryRow) domain() *kairos.Memory {
	m := &kairos.Memory{
		ID: r.ID, UserKey: r.UserKey, Store: r.Store, Type: r.Type, Content: r.Content,
		PursuingPriority: r.PursuingPriority, PeriodKey: r.PeriodKey, ChatID: r.ChatID,
		Tainted: r.Tainted, TaintSource: r.TaintSource,
		CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
	}
	if r.Tags != "" && r.Tags != "[]" {
		_ = json.Unmarshal([]byte(r.Tags), &m.Tags)
	}
	return m
}

// gdb uses prepared statements: recall runs several full-text queries per
// turn, and preparing an FTS5 query costs about as much as running it.
func (s *MemoryStore) gdb(ctx context.Context) *gorm.DB { return s.db.hot.WithContext(ctx) }

// StoreMemory inserts m, or merges it into the user's memory with the same
// merge key: the same normalized content (user_memory), or the same
// summary type, period key and chat id (summaries). A merge keeps the id
// and creation time, takes the new content, type and (when given)
// pursuing priority, unions the tags, and drops a stale embedding. Invalid
// input is kairos.EINVALID.
//
// m.CreatedAt (default: now) is when the memory was written; a summary's
// period key is read in m.CreatedAt's location (the user's time zone when
// the caller passes the turn's local time), so that "2026-03-09" spans
// that calendar day where the user is. The from/to filters of recall test
// overlap with that span (a user memory's span is its creation instant).
func (s *MemoryStore) StoreMemory(ctx context.Context, m *kairos.Memory) (*kairos.Memory, bool, error) {
	row, err := s.newRow(m)
	if err != nil {
		return nil, false, err
	}
	var (
		out    memoryRow
		merged bool
	)
	for attempt := 0; ; attempt++ {
		out, merged, err = s.upsert(ctx, row)
		// A concurrent insert of the same merge key loses the unique
		// index race; the retry then finds the row and merges.
		if err == nil || attempt == 2 || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("store memory: %w", err)
	}
	return out.domain(), merged, nil
}

func (s *MemoryStore) upsert(ctx context.Context, row memoryRow) (memoryRow, bool, error) {
	var (
		out    memoryRow
		merged bool
	)
	err := s.gdb(ctx).Transaction(func(tx *gorm.DB) error {
		var old memoryRow
		// FOR UPDATE serialises merges of one memory on PostgreSQL
		// (SQLite's write transactions are serial already).
		err := tx.Table("memories AS m").Select(memoryCols).Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).
			Where("m.user_key = ? AND m.merge_key = ?", row.UserKey, row.MergeKey).Take(&old).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			out = row
			return tx.Create(&out).Error
		}
		if err != nil {
			return err
		}
		merged = true
		out = old
		out.Content = row.Content
		out.Type = row.Type
		out.Tags = encodeTags(unionTags(old.domain().Tags, decodeTags(row.Tags)))
		if row.PursuingPriority != nil {
			out.PursuingPriority = row.PursuingPriority
		}
		if row.Store == kairos.StoreSummaries {
			out.SpanStart, out.SpanEnd = row.SpanStart, row.SpanEnd
		}
		// The newest write decides: a fact restated in a trusted turn is
		// the user's own again; one rewritten by a tainted turn (its type,
		// tags or wording) is marked, so a trusted copy never launders it.
		out.Tainted, out.TaintSource = row.Tainted, row.TaintSource
		out.UpdatedAt = max(old.UpdatedAt, row.UpdatedAt)
		updates := map[string]any{
			"content": out.Content, "type": out.Type, "tags": out.Tags,
			"pursuing_priority": out.PursuingPriority, "span_start": out.SpanStart,
			"span_end": out.SpanEnd, "updated_at": out.UpdatedAt,
			"tainted": out.Tainted, "taint_source": out.TaintSource,
		}
		if out.Content != old.Content {
			updates["embedding"] = nil
		}
		return tx.Model(&memoryRow{}).Where("seq = ?", old.Seq).Updates(updates).Error
	})
	return out, merged, err
}

// newRow validates m and builds its row.
func (s *MemoryStore) newRow(m *kairos.Memory) (memoryRow, error) {
	if m == nil {
		return memoryRow{}, kairos.Errorf(kairos.EINVALID, "a memory needs its user")
	}
	if err := m.Validate(); err != nil {
		return memoryRow{}, err
	}
	// PostgreSQL text cannot hold NUL; it carries no meaning anyway.
	content := strings.TrimSpace(dropNUL(m.Content))
	at := m.CreatedAt
	if at.IsZero() {
		at = s.db.Now().UTC()
	}
	row := memoryRow{
		ID: kairos.NewID(), UserKey: m.UserKey, Store: m.Store, Type: m.Type, Content: content,
		Tags: encodeTags(unionTags(nil, dropNULs(m.Tags))), PursuingPriority: m.PursuingPriority,
		Tainted: m.Tainted, TaintSource: taintSource(m),
		CreatedAt: ms(at), UpdatedAt: ms(at),
	}
	if m.Store == kairos.StoreUserMemory {
		norm := normalizeContent(content)
		sum := sha256.Sum256([]byte(norm))
		row.MergeKey = "m:" + hex.EncodeToString(sum[:16])
		row.ChatID = dropNUL(m.ChatID)
		row.SpanStart, row.SpanEnd = row.CreatedAt, row.CreatedAt
		return row, nil
	}
	// A summary spans its period read in the zone it was written in.
	start, end, err := kairos.PeriodRange(m.PeriodKey, at.Location())
	if err != nil {
		return memoryRow{}, err
	}
	row.PeriodKey, row.ChatID = m.PeriodKey, dropNUL(m.ChatID)
	row.MergeKey = "s:" + m.Type + "\x1f" + row.PeriodKey + "\x1f" + row.ChatID
	row.SpanStart, row.SpanEnd = ms(start), ms(end)-1
	return row, nil
}

// taintSource is what a tainted memory records as its origin.
func taintSource(m *kairos.Memory) string {
	if !m.Tainted {
		return ""
	}
	if src := kairos.Clip(dropNUL(m.TaintSource), 200); src != "" {
		return src
	}
	return "untrusted content"
}

func dropNUL(s string) string { return strings.ReplaceAll(s, "\x00", "") }

func dropNULs(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = dropNUL(s)
	}
	return out
}

// normalizeContent is the text two memories must share to be "the same":
// lower case, letters and digits only, single spaces.
func normalizeContent(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		space = true
	}
	return b.String()
}

// unionTags returns a's tags followed by b's new ones: trimmed, without
// empties or case-insensitive duplicates, at most MemoryMaxTags.
func unionTags(a, b []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{a, b} {
		for _, t := range list {
			t = strings.TrimSpace(t)
			k := strings.ToLower(t)
			if t == "" || seen[k] || len(out) == MemoryMaxTags {
				continue
			}
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

func encodeTags(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

func decodeTags(s string) []string {
	var tags []string
	_ = json.Unmarshal([]byte(s), &tags)
	return tags
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// FindMemory returns the user's memory id (ENOTFOUND otherwise, also when
// it belongs to someone else).
func (s *MemoryStore) FindMemory(ctx context.Context, userKey, id string) (*kairos.Memory, error) {
	var r memoryRow
	err := s.gdb(ctx).Table("memories AS m").Select(memoryCols).
		Where("m.user_key = ? AND m.id = ?", userKey, id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, kairos.Errorf(kairos.ENOTFOUND, "memory %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find memory: %w", err)
	}
	return r.domain(), nil
}

// ForgetMemory deletes the user's memory id (ENOTFOUND when the user has
// no such memory).
func (s *MemoryStore) ForgetMemory(ctx context.Context, userKey, id string) error {
	res := s.gdb(ctx).Where("user_key = ? AND id = ?", userKey, id).Delete(&memoryRow{})
	if res.Error != nil {
		return fmt.Errorf("forget memory: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "memory %s not found", id)
	}
	return nil
}

// SetEmbedding stores the vector of memory id as little-endian float32.
func (s *MemoryStore) SetEmbedding(ctx context.Context, id string, vec []float32) error {
	if len(vec) == 0 {
		return kairos.Errorf(kairos.EINVALID, "empty embedding")
	}
	res := s.gdb(ctx).Model(&memoryRow{}).Where("id = ?", id).Update("embedding", encodeVector(vec))
	if res.Error != nil {
		return fmt.Errorf("set embedding: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return kairos.Errorf(kairos.ENOTFOUND, "memory %s not found", id)
	}
	return nil
}

func encodeVector(vec []float32) []byte {
	b := make([]byte, 4*len(vec))
	for i, f := range vec {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

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
	g := s.gdb(ctx)
	if strings.TrimSpace(f.Query) == "" {
		var rows []memoryRow
		err := g.Raw("SELECT "+memoryCols+" FROM memories AS m WHERE "+where+
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

	cols := memoryCols
	withVec := len(f.QueryVector) > 0
	if withVec {
		cols += ", m.embedding"
	}
	var cands []memoryRow
	if terms := QueryTerms(f.Query); len(terms) > 0 {
		n := max(4*limit, 40)
		var err error
		if s.db.dialect == DialectPostgres {
			// Weights {D, C, B, A}: tags (A) count twice as much as
			// content (B), as in the SQLite ranking.
			q := "SELECT " + cols + ", ts_rank('{0.1, 0.2, 0.5, 1.0}', m.tsv, q.q) AS lex FROM memories AS m, to_tsquery('english', ?) AS q(q)" +
				" WHERE m.tsv @@ q.q AND " + where + " ORDER BY lex DESC, m.updated_at DESC LIMIT ?"
			err = g.Raw(q, append(append([]any{PostgresTSQuery(terms)}, args...), n)...).Scan(&cands).Error
		} else {
			cands, err = s.recallSQLite(ctx, f, terms, cols, where, args, n)
		}
		if err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
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
	return mems, nil
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
	text := SQLiteMatch
	full := text(terms)
	count, err := s.ftsCount(ctx, full, MemoryFTSBudget+1)
	if err != nil {
		return nil, err
	}
	if count <= MemoryFTSBudget {
		return s.ftsRank(ctx, f, full, 0, cols, where, args, n)
	}
	type termCount struct {
		term  string
		count int
	}
	var rare []termCount
	for _, t := range terms {
		c, err := s.ftsCount(ctx, text([]string{t}), MemoryFTSBudget/2+1)
		if err != nil {
			return nil, err
		}
		if c <= MemoryFTSBudget/2 {
			rare = append(rare, termCount{t, c})
		}
	}
	sort.SliceStable(rare, func(i, j int) bool { return rare[i].count < rare[j].count })
	var rareTerms []string
	total := 0
	for _, r := range rare {
		if total+r.count > 2*MemoryFTSBudget {
			break
		}
		total += r.count
		rareTerms = append(rareTerms, r.term)
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
