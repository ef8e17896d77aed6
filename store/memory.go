package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/kairos-agent/kairos"
	"github.com/kairos-agent/kairos/internal/calendar"
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
	start, end, err := calendar.PeriodRange(m.PeriodKey, at.Location())
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
