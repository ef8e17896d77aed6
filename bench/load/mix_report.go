package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// report prints the mixed soak's figures per kind (doc/benchmarks.md,
// "Latency tail") and, with -slow, the slow ECHO turns.
func (s *soak) report() {
	b := s.b
	b.tg.mu.Lock()
	defer b.tg.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Printf("mixed soak: %d users for %v (seed %d), send limits %s, workers %s\n",
		b.o.chats, *mixDuration, *mixSeed, map[bool]string{true: "on", false: "off"}[b.o.limits], workersName(b.o.workers))
	lat := map[string][]time.Duration{}
	pushed := map[string]int{}
	var inside []time.Duration
	for tok, m := range s.sent {
		pushed[m.kind]++
		at, ok := s.seen[tok]
		if !ok {
			continue
		}
		lat[m.kind] = append(lat[m.kind], at.Sub(m.pushed))
		if m.kind == kindEcho {
			if d, ok := b.tg.deliverAt[m.update]; ok {
				inside = append(inside, at.Sub(d))
			}
		}
		if m.kind == kindRemind {
			if fire, ok := s.seen[fireToken(tok)]; ok {
				due := m.pushed.Truncate(time.Second).Add(time.Minute)
				lat[kindFire] = append(lat[kindFire], fire.Sub(due))
			}
			pushed[kindFire]++
		}
	}
	fmt.Printf("%-9s %6s %6s %10s %10s %10s %10s\n", "kind", "sent", "seen", "p50", "p95", "p99", "max")
	for _, k := range []string{kindEcho, kindCell, kindSearch, kindRemember, kindRecall, kindRemind, kindVoice, kindFire} {
		printKind(k, pushed[k], lat[k])
	}
	printKind("echo in", len(inside), inside)
	fmt.Println("(push → reply seen; remind includes a 0.5 s press of Approve; fire is reminder seen − due time;")
	fmt.Println(" 'echo in' is ECHO from the first getUpdates that handed the update out → reply seen)")
	fmt.Printf("approvals pressed %d\n", s.approved)
	b.printCosts()
	if *mixTrace != "" {
		s.writeSlow(*mixTrace, lat[kindEcho])
	}
}

func workersName(n int) string {
	if n <= 0 {
		return "default"
	}
	return fmt.Sprint(n)
}

func printKind(kind string, sent int, d []time.Duration) {
	slices.Sort(d)
	fmt.Printf("%-9s %6d %6d %10s %10s %10s %10s\n", kind, sent, len(d), ms(pct(d, 50)), ms(pct(d, 95)), ms(pct(d, 99)), ms(pct(d, 100)))
}

// writeSlow writes every ECHO turn slower than the ECHO p95 with what
// surrounded it: when kairos got it, the chat's last bot message before
// the reply, and what else was in flight across all chats at its push.
func (s *soak) writeSlow(path string, echo []time.Duration) {
	cut := pct(echo, 95)
	var out strings.Builder
	fmt.Fprintf(&out, "ECHO turns over p95 (%s)\n", ms(cut))
	type row struct {
		tok string
		m   *sentMsg
		e2e time.Duration
	}
	var rows []row
	for tok, m := range s.sent {
		if at, ok := s.seen[tok]; ok && m.kind == kindEcho && at.Sub(m.pushed) > cut {
			rows = append(rows, row{tok, m, at.Sub(m.pushed)})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return a.m.pushed.Compare(b.m.pushed) })
	for _, r := range rows {
		at := s.seen[r.tok]
		deliver := s.b.tg.deliverAt[r.m.update]
		prev := time.Time{}
		for _, t := range s.sends[r.m.chat] {
			if t.Before(at) && t.After(prev) {
				prev = t
			}
		}
		gap := "none"
		if !prev.IsZero() {
			gap = ms(at.Sub(prev))
		}
		fmt.Fprintf(&out, "%s t=%.3fs e2e %s delivered +%s; chat's previous bot message %s before the reply; in flight: %s\n",
			r.tok, r.m.pushed.Sub(s.b.loadStart).Seconds(), ms(r.e2e), ms(deliver.Sub(r.m.pushed)), gap, s.inFlight(r.m.pushed))
	}
	os.WriteFile(path, []byte(out.String()), 0o644)
}

// inFlight counts, per kind, the messages pushed but not yet answered at t.
func (s *soak) inFlight(t time.Time) string {
	n := map[string]int{}
	for tok, m := range s.sent {
		if m.pushed.After(t) {
			continue
		}
		if at, ok := s.seen[tok]; !ok || at.After(t) {
			n[m.kind]++
		}
	}
	var parts []string
	for _, k := range []string{kindEcho, kindCell, kindSearch, kindRemember, kindRecall, kindRemind, kindVoice} {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n[k]))
		}
	}
	return strings.Join(parts, ", ")
}
