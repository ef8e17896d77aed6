package kairos

import "strings"

// HostAllowed reports whether host is on an allow list: an exact host, or
// "*.suffix" for any subdomain of suffix (not suffix itself). Case and a
// trailing dot do not matter.
func HostAllowed(host string, list []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	for _, p := range list {
		p = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(p)), ".")
		if suf, ok := strings.CutPrefix(p, "*."); ok {
			if suf != "" && strings.HasSuffix(host, "."+suf) {
				return true
			}
		} else if p != "" && host == p {
			return true
		}
	}
	return false
}
