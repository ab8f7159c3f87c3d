package aggregatetest

import (
	"fmt"
	"reflect"
	"strings"
)

// Diff renders want and got as indented JSON (with the Go type, and each
// element's type for slices of interfaces) and returns a line diff: "-"
// lines are only in want, "+" lines only in got.
func Diff(want, got any) string {
	a, b := render(want), render(got)
	return lineDiff(a, b)
}

func render(v any) []string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Interface {
		var out []string
		out = append(out, fmt.Sprintf("%d items", rv.Len()))
		for i := range rv.Len() {
			lines := jsonOf(rv.Index(i).Interface())
			out = append(out, fmt.Sprintf("[%d] %s", i, lines[0]))
			for _, l := range lines[1:] {
				out = append(out, "    "+l)
			}
		}
		return out
	}
	return jsonOf(v)
}

func splitLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// lineDiff is a longest-common-subsequence diff; the inputs are small.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
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
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			sb.WriteString("- " + a[i] + "\n")
			i++
		default:
			sb.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return sb.String()
}
