package code

import (
	"strings"

	"github.com/kairos-agent/kairos"
)

// CellWrites classifies code run outside a turn (a watching cell) as
// execute classifies it: whether it may send anything but GET/HEAD under
// the policy p (then it needs the code.network_write approval), and the
// reason the approval states.
func CellWrites(p *kairos.Policy, code string) (bool, string) {
	g := GrantFor(p)
	if !writesAllowed(g) || !Scan(code).NetworkWrite {
		return false, ""
	}
	return true, "the code " + writeReason(g)
}

// writeReason is the approval's reason for code that may write to the
// network under g: the methods beyond GET/HEAD it may use.
func writeReason(g kairos.NetworkGrant) string {
	var ms []string
	for _, m := range g.Methods {
		if m != "GET" && m != "HEAD" {
			ms = append(ms, m)
		}
	}
	return "may send data to the network (" + strings.Join(ms, "/") + " requests)"
}

// CellGrant is the network grant of a watching cell: the policy's whole
// grant when its write was approved, GET/HEAD only otherwise.
func CellGrant(p *kairos.Policy, writeApproved bool) kairos.NetworkGrant {
	g := GrantFor(p)
	if writeApproved {
		return g
	}
	return readOnly(g)
}
