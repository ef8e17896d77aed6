// Package tools holds the registry of model-facing tools. The tools
// themselves live in tools/search, tools/code and tools/memory; each
// implements kairos.Tool and knows nothing of the others.
//
// The registry decides which tools a policy offers; it must not run them
// (the agent does, under its gates).
package tools
