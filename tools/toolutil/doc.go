// Package toolutil holds small helpers shared by the model-facing tools
// (tools/search, tools/memory, tools/code): strict decoding of the model's
// arguments into a struct with clear kairos.EINVALID messages, and shaping
// of JSON results.
//
// It must stay tiny and free of I/O: it imports the root package and the
// standard library only, and knows nothing about any single tool.
package toolutil
