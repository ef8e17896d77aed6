package usage

// Waiting is how many calls wait for the calls in flight to settle.
func (g *Guard) Waiting() int { return int(g.waiting.Load()) }
