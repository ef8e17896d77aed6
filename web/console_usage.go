package web

import (
	"net/http"
	"slices"
	"time"
)

// usageTotal is one user's use of one model over the page's period.
type usageTotal struct {
	User, Model   string
	Calls, Tokens int64
	Cost          float64
	Priced        bool // some call had a price
	Unpriced      int64
}

func (s *Server) usagePage(w http.ResponseWriter, r *http.Request, sess *session) {
	const days = 30
	now := s.cfg.Now()
	rows, err := s.cfg.Backend.Usage(r.Context(), 0, now.AddDate(0, 0, -days))
	if err != nil {
		s.consoleError(w, r, err)
		return
	}
	zone := s.cfg.Backend.Zone(r.Context(), sess.UserID)
	// The chart's days are the operator's; each row's day is its user's
	// own (as `kairos usage` and the caps count them).
	labels, keys := make([]string, days), make([]string, days)
	local := now.In(zone)
	for i := range days {
		d := time.Date(local.Year(), local.Month(), local.Day()-(days-1-i), 12, 0, 0, 0, zone)
		labels[i], keys[i] = d.Format("2 Jan"), d.Format(time.DateOnly)
	}
	cost, tokens := make([]float64, days), make([]float64, days)
	per := map[[2]string]*usageTotal{}
	var users []string
	var order [][2]string
	for _, row := range rows {
		if i := slices.Index(keys, row.Day); i >= 0 {
			tokens[i] += float64(row.Tokens)
			if row.CostUSD != nil {
				cost[i] += *row.CostUSD
			}
		}
		k := [2]string{row.UserKey, row.Model}
		t := per[k]
		if t == nil {
			t = &usageTotal{User: row.UserKey, Model: row.Model}
			per[k] = t
			order = append(order, k)
			users = append(users, row.UserKey)
		}
		t.Calls, t.Tokens, t.Unpriced = t.Calls+row.Calls, t.Tokens+row.Tokens, t.Unpriced+row.UnpricedCalls
		if row.CostUSD != nil {
			t.Cost, t.Priced = t.Cost+*row.CostUSD, true
		}
	}
	totals := make([]*usageTotal, len(order))
	for i, k := range order {
		totals[i] = per[k]
	}
	slices.SortStableFunc(totals, func(a, b *usageTotal) int {
		switch {
		case a.Cost > b.Cost:
			return -1
		case a.Cost < b.Cost:
			return 1
		}
		return int(b.Tokens - a.Tokens)
	})
	xTitle := "day (" + ZoneName(zone, now) + ")"
	costChart := s.chart(figure{Title: "Cost per day, last 30 days", Legend: "cost (USD)", XTitle: xTitle, XHead: "Day", YHead: "Cost",
		Labels: labels, Values: cost, Format: USD, XLabels: 6})
	tokenChart := s.chart(figure{Title: "Tokens per day, last 30 days", Legend: "tokens", XTitle: xTitle, XHead: "Day", YHead: "Tokens",
		Labels: labels, Values: tokens, Format: count, XLabels: 6})
	s.renderPage(w, r, http.StatusOK, sess, pageData{name: "usage", data: obj{"CostChart": costChart, "TokenChart": tokenChart,
		"Totals": totals}, people: users})
}
