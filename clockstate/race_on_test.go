//go:build race

package clockstate

// raceEnabled: the race detector is on (the metamorphic test samples).
const raceEnabled = true
