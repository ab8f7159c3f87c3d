package sqlquery

import (
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// OrderBy translates a Plan's sort into the list of an ORDER BY clause
// (without the keywords). Each key sorts by JSON type rank first, then by
// number, then by string in byte order, all in the key's direction: the
// total order of package query, so every backend returns the same order.
// Keys that are constant for every row are left out.
func (t *Translator) OrderBy(sorts []query.Sort) (string, error) {
	var keys []string
	for i, s := range sorts {
		if err := query.ValidatePath(s.Field); err != nil {
			return "", fmt.Errorf("sort[%d]: %w", i, err)
		}
		dir := " ASC"
		switch strings.ToUpper(string(s.Direction)) {
		case "", string(query.Asc):
		case string(query.Desc):
			dir = " DESC"
		default:
			return "", factum.IllegalArgument(fmt.Sprintf("sqlquery: sort[%d]: direction %q: want ASC or DESC", i, string(s.Direction)))
		}
		src := t.resolve(s.Field, nil)
		if r := src.rank(); r != "" {
			keys = append(keys, r+dir)
		}
		if n := src.sortNum(); n != "" {
			keys = append(keys, n+dir)
		}
		if str := src.str(); str != "" {
			keys = append(keys, src.ordered(str)+dir)
		}
	}
	return strings.Join(keys, ", "), nil
}
