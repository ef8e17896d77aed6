package cell

import (
	"net/url"
	"slices"
	"strings"

	"github.com/kairos-agent/kairos"
)

// Targets is what a piece of code reaches on the network, when every
// network call in it names its URL and method literally: the hosts and
// the methods. A standing grant (kairos.Grant) for a network write is a
// grant for exactly these, and a cell run under one gets a network grant
// of these hosts and methods only (Restrict), whatever else the code
// might compute.
type Targets struct {
	Hosts   []string // sorted, lower case
	Methods []string // sorted, upper case
}

// String is the grant target: "GET,POST ha.local,api.example.org".
func (t Targets) String() string {
	return strings.Join(t.Methods, ",") + " " + strings.Join(t.Hosts, ",")
}

// networkCallees are the globals that reach the network.
var networkCallees = map[string]string{"getJSON": "GET", "postJSON": "POST", "fetch": "", "fetchWithAuth": ""}

// NetworkTargets reads the hosts and methods of code's network calls. ok
// is false when one cannot be named from the text alone: a URL or method
// that is computed, a network global used other than by a direct call
// (aliased, or named as a string: globalThis["postJSON"]), a template
// URL, or a scan that sees a write the calls do not account for.
func NetworkTargets(code string) (Targets, bool) {
	toks := tokenize(code)
	hosts, methods := map[string]bool{}, map[string]bool{}
	// Every `method` key must be one a fetch's own options name: one
	// elsewhere may reach a call through a variable or a spread.
	keys, seen := 0, 0
	for _, tk := range toks {
		if tk.text == "method" && (tk.kind == tokIdent || tk.kind == tokString) {
			keys++
		}
	}
	for i, tk := range toks {
		method, watched := networkCallees[tk.text]
		if !watched {
			continue
		}
		if tk.kind != tokIdent || (i > 0 && toks[i-1].kind == tokPunct && toks[i-1].text == ".") {
			return Targets{}, false // a string naming it, or a property access
		}
		args := callArgs(toks, i)
		if len(args) == 0 {
			return Targets{}, false // aliased or passed around
		}
		host, ok := literalHost(args[0])
		if !ok {
			return Targets{}, false
		}
		if method == "" {
			var named bool
			if method, named, ok = fetchMethod(args); !ok {
				return Targets{}, false
			}
			if named {
				seen++
			}
		}
		hosts[host], methods[method] = true, true
	}
	if len(hosts) == 0 || seen != keys {
		return Targets{}, false
	}
	t := Targets{Hosts: sortedKeys(hosts), Methods: sortedKeys(methods)}
	if Scan(code).NetworkWrite && !slices.ContainsFunc(t.Methods, func(m string) bool { return !slices.Contains(ReadMethods, m) }) {
		return Targets{}, false // a write the calls do not show
	}
	return t, true
}

// literalHost is the host of a URL given as one plain string literal.
func literalHost(arg []token) (string, bool) {
	if len(arg) != 1 || arg[0].kind != tokString || arg[0].template {
		return "", false
	}
	u, err := url.Parse(strings.TrimSpace(arg[0].text))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return "", false
	}
	return strings.ToLower(u.Hostname()), true
}

// fetchMethod reads the method of fetch(url, {method: "POST", …}): GET
// without options or without a method key (named reports one); options
// built elsewhere or spread in, two method keys, or a method that is not
// a plain literal cannot be named.
func fetchMethod(args [][]token) (method string, named, ok bool) {
	if len(args) < 2 {
		return "GET", false, true
	}
	opts := args[1]
	if len(opts) == 0 || opts[0].text != "{" || opts[0].kind != tokPunct {
		return "", false, false // options computed elsewhere
	}
	method = "GET"
	for i, tk := range opts {
		if tk.kind == tokPunct && tk.text == "." && i+2 < len(opts) && opts[i+1].text == "." && opts[i+2].text == "." {
			return "", false, false // a spread may bring a method
		}
		if tk.text != "method" || (tk.kind != tokIdent && tk.kind != tokString) {
			continue
		}
		if named || i+2 >= len(opts) || opts[i+1].text != ":" || opts[i+2].kind != tokString || opts[i+2].template {
			return "", false, false
		}
		method, named = strings.ToUpper(strings.TrimSpace(opts[i+2].text)), true
	}
	if !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}, method) {
		return "", false, false
	}
	return method, named, true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Restrict narrows a cell's network grant to what a standing grant
// covered: the targets' hosts and methods, within g (a host or method g
// does not allow stays refused).
func Restrict(g kairos.NetworkGrant, t Targets) kairos.NetworkGrant {
	if !g.Enabled {
		return g
	}
	var hosts, methods []string
	for _, h := range t.Hosts {
		if AllowedHost(h, g.AllowHosts) {
			hosts = append(hosts, h)
		}
	}
	for _, m := range t.Methods {
		if slices.Contains(g.Methods, m) {
			methods = append(methods, m)
		}
	}
	if len(hosts) == 0 || len(methods) == 0 {
		return kairos.NetworkGrant{}
	}
	g.AllowHosts, g.Methods = hosts, methods
	return g
}

// AllowedHost reports whether host lies within one of the allow list's
// patterns (a host, or *.suffix for its subdomains).
func AllowedHost(host string, patterns []string) bool {
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if suf, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suf) {
				return true
			}
			continue
		}
		if p == host {
			return true
		}
	}
	return false
}
