// Package mock holds one fake per root interface for unit tests, each a
// struct of function fields (as in Ben Johnson's wtf/mock): a test sets
// the behaviour it needs and reads back what was called. Fakes of whole
// services reached over HTTP (the Bot API, the model endpoint) are in
// internal/testkit; fakes here stand in for an interface inside one
// process.
package mock
