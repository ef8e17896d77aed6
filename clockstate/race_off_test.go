//go:build !race

package clockstate

// raceEnabled: the race detector is off (the metamorphic test runs whole).
const raceEnabled = false
