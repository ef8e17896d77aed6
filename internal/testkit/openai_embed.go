package testkit

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// --- embeddings and models -----------------------------------------------------

// EmbedText returns the fake's embedding of text: a hashed bag of words
// (lower-cased letter/digit runs, FNV-1a into dims buckets), L2-normalised.
// Texts sharing more words have a higher dot product, so tests can check
// ranking. A text without words gets a unit vector on bucket 0.
func EmbedText(text string, dims int) []float32 {
	if dims <= 0 {
		dims = 64
	}
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		v[h.Sum64()%uint64(dims)]++
	}
	if len(words) == 0 {
		v[0] = 1
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dims)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// Cosine returns the cosine similarity of two vectors of equal length.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		if i >= len(b) {
			break
		}
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func (f *FakeOpenAI) embeddings(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	var wr struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	f.mu.Lock()
	now := f.now()
	dims := f.dims
	f.mu.Unlock()
	record := func(er EmbeddingRequest, status int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		er.Time, er.Status = now, status
		f.embeds = append(f.embeds, er)
		f.signalLocked()
	}
	if json.Unmarshal(body, &wr) != nil {
		record(EmbeddingRequest{}, 400)
		writeOAError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "", "")
		return
	}
	inputs, ok := embeddingInputs(wr.Input)
	er := EmbeddingRequest{Model: wr.Model, Input: inputs, Dimensions: wr.Dimensions, EncodingFormat: wr.EncodingFormat}
	if wr.Model == "" {
		record(er, 400)
		writeOAError(w, 400, "you must provide a model parameter", "invalid_request_error", "", "")
		return
	}
	if !ok {
		record(er, 400)
		writeOAError(w, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", "invalid_request_error", "", "")
		return
	}
	f.mu.Lock()
	known := f.knownModelLocked(wr.Model)
	f.mu.Unlock()
	if !known {
		record(er, 404)
		writeOAError(w, 404, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", wr.Model), "invalid_request_error", "model_not_found", "")
		return
	}
	if wr.Dimensions > 0 {
		dims = wr.Dimensions
	}
	record(er, 200)
	data := make([]map[string]any, 0, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vec := EmbedText(in, dims)
		tokens += wordCount(in)
		var emb any = vec
		if wr.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(vec))
			for j, x := range vec {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": emb})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": wr.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// embeddingInputs decodes input: a string, strings, tokens or token lists.
// Empty strings and empty lists are invalid, as with OpenAI.
func embeddingInputs(raw json.RawMessage) ([]string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, s != ""
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		if len(ss) == 0 {
			return nil, false
		}
		for _, x := range ss {
			if x == "" {
				return ss, false
			}
		}
		return ss, true
	}
	var toks []int
	if json.Unmarshal(raw, &toks) == nil && len(toks) > 0 {
		return []string{intsText(toks)}, true
	}
	var lists [][]int
	if json.Unmarshal(raw, &lists) == nil && len(lists) > 0 {
		var out []string
		for _, l := range lists {
			if len(l) == 0 {
				return nil, false
			}
			out = append(out, intsText(l))
		}
		return out, true
	}
	return nil, false
}

func intsText(toks []int) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = "t" + strconv.Itoa(t)
	}
	return strings.Join(parts, " ")
}

func (f *FakeOpenAI) modelIDsLocked() []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range f.models {
		add(id)
	}
	if !f.strictModels {
		var extra []string
		for m := range f.modelQueue {
			extra = append(extra, m)
		}
		for m := range f.modelHandlers {
			extra = append(extra, m)
		}
		sort.Strings(extra)
		for _, m := range extra {
			add(m)
		}
	}
	return ids
}

func (f *FakeOpenAI) listModels(w http.ResponseWriter) {
	f.mu.Lock()
	ids := f.modelIDsLocked()
	created := f.now().Unix()
	f.mu.Unlock()
	data := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		entry := map[string]any{"id": id, "object": "model", "created": created, "owned_by": "testkit"}
		f.mu.Lock()
		for k, v := range f.modelFields[id] {
			entry[k] = v
		}
		f.mu.Unlock()
		data = append(data, entry)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (f *FakeOpenAI) getModel(w http.ResponseWriter, id string) {
	f.mu.Lock()
	ids := f.modelIDsLocked()
	known := !f.strictModels
	created := f.now().Unix()
	f.mu.Unlock()
	for _, m := range ids {
		if m == id {
			known = true
		}
	}
	if !known {
		writeOAError(w, 404, fmt.Sprintf("The model '%s' does not exist", id), "invalid_request_error", "model_not_found", "model")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "model", "created": created, "owned_by": "testkit"})
}
