package skill

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the LCS table; past it the diff replaces every line.
const maxDiffCells = 4_000_000

// unifiedDiff returns a unified diff (3 lines of context) of two line
// lists, "" when they are equal.
func unifiedDiff(nameA, nameB string, a, b []string) string {
	ops := diffOps(a, b)
	changed := false
	for _, o := range ops {
		if o.kind != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for _, h := range hunks(ops, 3) {
		writeHunk(&out, ops[h[0]:h[1]])
	}
	return out.String()
}

type op struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // 1-based line numbers in a and b before this op
}

// diffOps is the edit script of a longest common subsequence.
func diffOps(a, b []string) []op {
	n, m := len(a), len(b)
	var ops []op
	if n*m > maxDiffCells {
		for i, l := range a {
			ops = append(ops, op{'-', l, i + 1, 1})
		}
		for j, l := range b {
			ops = append(ops, op{'+', l, n + 1, j + 1})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i + 1, j + 1})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', b[j], i + 1, j + 1})
			j++
		default:
			ops = append(ops, op{'-', a[i], i + 1, j + 1})
			i++
		}
	}
	return ops
}

// hunks groups the changes with ctx lines of context: [start, end) ranges of ops.
func hunks(ops []op, ctx int) [][2]int {
	var out [][2]int
	for i := 0; i < len(ops); i++ {
		if ops[i].kind == ' ' {
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for k := i; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k + 1
			} else if k-end >= 2*ctx {
				break
			}
		}
		end = min(end+ctx, len(ops))
		if len(out) > 0 && start <= out[len(out)-1][1] {
			out[len(out)-1][1] = end
		} else {
			out = append(out, [2]int{start, end})
		}
		i = end - 1
	}
	return out
}

func writeHunk(out *strings.Builder, ops []op) {
	na, nb := 0, 0
	for _, o := range ops {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	sa, sb := ops[0].ai, ops[0].bi
	if na == 0 {
		sa--
	}
	if nb == 0 {
		sb--
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", sa, na, sb, nb)
	for _, o := range ops {
		out.WriteByte(o.kind)
		out.WriteString(o.text)
		out.WriteByte('\n')
	}
}
