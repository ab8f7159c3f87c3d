package lincheck

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Check fails t unless porcupine finds history linearizable under
// model within its time limit, and then explains where it is not. Set
// FACTUM_PORCUPINE_DIR to keep porcupine's visualisation of a failure.
func Check(t testing.TB, model porcupine.Model, history []porcupine.Operation) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(model, history, 30*time.Second)
	switch res {
	case porcupine.Ok:
		t.Logf("%d operations: linearizable", len(history))
		return
	case porcupine.Unknown:
		t.Fatalf("porcupine could not decide %d operations within its time limit", len(history))
	}
	if dir := os.Getenv("FACTUM_PORCUPINE_DIR"); dir != "" {
		path := filepath.Join(dir, sanitize(t.Name())+".html")
		if err := porcupine.VisualizePath(model, info, path); err != nil {
			t.Logf("visualisation: %v", err)
		} else {
			t.Logf("visualisation: %s", path)
		}
	}
	explain(t, model, history)
	t.Fatalf("the history of %d operations is not linearizable", len(history))
}

// explain logs, for each partition of history that is not linearizable,
// the end of its longest linearizable prefix, with the model's state after
// each step, and the first operations that could not be placed after it.
func explain(t testing.TB, model porcupine.Model, history []porcupine.Operation) {
	t.Helper()
	whole := model
	whole.Partition = nil
	for _, part := range model.Partition(history) {
		res, info := porcupine.CheckOperationsVerbose(whole, part, 10*time.Second)
		if res == porcupine.Ok {
			continue
		}
		var best []porcupine.Operation
		for _, lins := range info.PartialLinearizationsOperations() {
			for _, lin := range lins {
				if len(lin) > len(best) {
					best = lin
				}
			}
		}
		describe := func(op porcupine.Operation) string {
			return fmt.Sprintf("[%d..%d] c%d %s", op.Call%1e10, op.Return%1e10, op.ClientId, model.DescribeOperation(op.Input, op.Output))
		}
		placed := map[int64]bool{}
		state := model.Init()
		var lines []string
		for _, op := range best {
			_, state = model.Step(state, op.Input, op.Output)
			placed[op.Call] = true
			lines = append(lines, "  "+describe(op)+" => "+model.DescribeState(state))
		}
		if len(lines) > 10 {
			lines = lines[len(lines)-10:]
		}
		t.Logf("a partition of %d operations; its longest linearizable prefix (%d) ends:", len(part), len(best))
		for _, l := range lines {
			t.Log(l)
		}
		rest := slices.Clone(part)
		slices.SortFunc(rest, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		n := 0
		for _, op := range rest {
			if !placed[op.Call] && n < 6 {
				t.Log("  not placed: " + describe(op))
				n++
			}
		}
	}
}

func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// PartitionBy returns a porcupine.Model Partition that splits a history
// by the key of each operation's input, in the order the keys first
// appear: operations on different keys never constrain each other, and
// porcupine checks each part on its own, which keeps long histories
// tractable.
func PartitionBy[K comparable](key func(input any) K) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[K][]porcupine.Operation{}
		var keys []K
		for _, op := range h {
			k := key(op.Input)
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		parts := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	}
}
