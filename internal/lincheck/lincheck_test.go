package lincheck_test

import (
	"reflect"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/factum-go/factum/internal/lincheck"
)

func TestPartitionBy(t *testing.T) {
	op := func(key, call int) porcupine.Operation { return porcupine.Operation{Input: key, Call: int64(call)} }
	tests := []struct {
		name    string
		history []porcupine.Operation
		want    [][]porcupine.Operation
	}{
		{"empty", nil, [][]porcupine.Operation{}},
		{"one key", []porcupine.Operation{op(1, 0), op(1, 1)}, [][]porcupine.Operation{{op(1, 0), op(1, 1)}}},
		{"keys in first-seen order, operations in history order",
			[]porcupine.Operation{op(7, 0), op(3, 1), op(7, 2), op(5, 3), op(3, 4)},
			[][]porcupine.Operation{{op(7, 0), op(7, 2)}, {op(3, 1), op(3, 4)}, {op(5, 3)}}},
	}
	partition := lincheck.PartitionBy(func(in any) int { return in.(int) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := partition(tt.history); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
