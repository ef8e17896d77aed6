//go:build !unix

package clockstate

// lockFile is in-process only where flock does not exist.
func lockFile(string) (func(), error) { return func() {}, nil }
