//go:build !linux

package mcp_test

func runHelpers() {}
