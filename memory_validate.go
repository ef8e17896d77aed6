package kairos

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Validate checks the rules every stored memory obeys, whoever writes it
// (the memory tool, the session and roll-up jobs, the store): a user, a
// known store, content that is valid UTF-8, a known category or summary
// type, a pursuing priority in 0..100 and a period key of the shape its
// summary type has. Errors are EINVALID and name the field as the memory
// tool's arguments do, so the model can correct its call.
func (m *Memory) Validate() error {
	if m.UserKey == "" {
		return Errorf(EINVALID, "a memory needs its user")
	}
	content := strings.TrimSpace(strings.ReplaceAll(m.Content, "\x00", ""))
	if content == "" {
		return Errorf(EINVALID, "argument \"content\" is required for store")
	}
	if !utf8.ValidString(content) {
		return Errorf(EINVALID, "argument \"content\" is not valid UTF-8")
	}
	if p := m.PursuingPriority; p != nil && (*p < 0 || *p > 100) {
		return Errorf(EINVALID, "argument \"pursuingPriority\": %d is out of range 0..100", *p)
	}
	switch m.Store {
	case StoreUserMemory:
		if !slices.Contains(MemoryCategories, m.Type) {
			return oneOf("category", m.Type, MemoryCategories)
		}
		if m.PeriodKey != "" {
			return Errorf(EINVALID, "argument \"period_key\" is only for store %q", StoreSummaries)
		}
	case StoreSummaries:
		if !slices.Contains(SummaryTypes, m.Type) {
			return oneOf("summary_type", m.Type, SummaryTypes)
		}
		return CheckPeriodKey(m.Type, m.PeriodKey)
	default:
		return oneOf("store", m.Store, []string{StoreUserMemory, StoreSummaries})
	}
	return nil
}

func oneOf(arg, v string, allowed []string) error {
	return Errorf(EINVALID, "argument %q: %q is not one of %s", arg, v, strings.Join(allowed, ", "))
}
