// Package policy reads, validates and hot-reloads the operator's policy
// file (KAIROS_POLICY): the YAML form of kairos.Policy.
//
// What it does:
//
//   - Load / LoadFile / Parse decode the file strictly. The decoder walks
//     goccy/go-yaml's AST itself (rather than calling yaml.Unmarshal) so it
//     can report every problem of the file at once, each as
//     "file:line:col: message" from the YAML tokens' positions: syntax
//     errors, unknown keys (with "did you mean …?"), wrong types, bad enum
//     values, malformed ISO-8601 durations, HH:MM times, cron specs, host
//     names, unknown task verbs, risk tiers and action names, duplicate
//     check-in rule ids, negative budgets.
//   - Decoding starts from kairos.DefaultPolicy(): a missing key keeps its
//     default, a null value counts as missing, a given list or map replaces
//     the default one (write [] to empty a list). The built-in blocked
//     categories (kairos.BuiltinBlockedCategories) are always merged into
//     network.blocked_categories; they cannot be removed.
//   - YAML 1.2 rules apply: yes/no/on/off are strings, so `mode: off` is the
//     clock mode and `enabled: yes` is an error asking for true/false.
//     Anchors, aliases and merge keys (<<) are supported.
//   - A missing file is not an error: the defaults apply and
//     LoadResult.Defaults says so.
//   - Validate checks a policy built in code, with the same rules.
//   - Watcher keeps the last good policy in force, reloads on change
//     (fsnotify on the directory, debounced, content-hashed), validates
//     first and reports failures through its onChange callback and
//     LastReload. Static wraps a fixed policy. Both implement Source, but
//     consumers should depend on a plain `func() *kairos.Policy`.
//   - Summary and StatusLine render the /policy command's text.
//   - WebEditRefusal decides whether an edit from the web (the query
//     API's PUT /api/v1/policy, the console's editor) only narrows or
//     tunes the policy in force; it names the first key that would widen
//     it (a new command, URL, secret, host, method, feature or person,
//     fewer approvals, more budget). It compares, it changes nothing.
//
// What it must not do: import any other Kairos package than the root, act
// on the policy (enforcement belongs to agent, sandbox, bot and tools), or
// modify a *kairos.Policy after handing it out: policies returned by
// Current are shared and read-only.
package policy
