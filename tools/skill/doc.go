// Package skill is the `skill` tool and the skill__<name> tools: skills
// Kairos builds for itself (seed 004's BUILD and UPDATE verbs).
//
// A skill is JavaScript defining run(input), an input JSON schema, tests
// and the capabilities it needs (network hosts, secret names). `create`
// and `update` run the tests in a code cell first (kairos.CodeRunner, the
// same sandbox as the code tool), classify the risk, and ask a human
// always (kairos.ToolAction.AlwaysAsk) showing the whole code or the
// diff, the tests and their results; the version takes over only when
// the call runs, after Approve. Each approved, enabled skill of the user
// (and each shared one) is offered as the tool skill__<name>, which runs
// the current version as a cell under the policy's budgets, allow-list
// and secrets.
//
// Each test is one call of run(input) in a cell of its own, built as a
// real call's (tests.go); the host compares the returned value with the
// expected one, or runs the test's predicate over it in a cell without
// the skill's code, so nothing the skill's code does marks a test passed.
//
// It must not: run a skill's tests with network writes or secrets (they
// run before anyone approved); let the skill's code share a runtime with
// a verdict; hand a cell more than the skill declares
// or the policy grants now; offer another user's unshared skill; exist at
// all when features.self_update is false; import the sandbox.
package skill
