package query_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/factum-go/factum/query"
)

// inCondition is an AND of n IN children of 200 values each, about 1 KiB
// per child: n = 1024 is a 1 MiB condition within the decoder's ceilings.
func inCondition(n int) []byte {
	return andOf(n, func(b *bytes.Buffer, i int) {
		fmt.Fprintf(b, `{"field":"state.f%d","operator":"IN","value":[`, i%10)
		for v := range 200 {
			if v > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%d", 1000+v)
		}
		b.WriteString(`]}`)
	})
}

// BenchmarkParseCondition decodes conditions of 64 KiB to 1 MiB: MB/s
// stays flat across the sizes when decoding is linear.
func BenchmarkParseCondition(b *testing.B) {
	for _, n := range []int{64, 256, 1024} {
		data := inCondition(n)
		b.Run(fmt.Sprintf("%dKiB", len(data)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := query.ParseCondition(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Nodes rather than values: an AND of small EQ children.
	for _, n := range []int{1000, 4000, query.MaxDecodeNodes - 1} {
		data := wideCondition(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := query.ParseCondition(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseNestedBomb is the 4,990-level, 160 kB condition of issue
// 13 (7-12 s and 1.2 GB before): refused at MaxDecodeDepth.
func BenchmarkParseNestedBomb(b *testing.B) {
	for _, depth := range []int{4990, 50_000} {
		data := nestedCondition(depth)
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := query.ParseCondition(data); err == nil {
					b.Fatal("bomb decoded")
				}
			}
		})
		query := append(append([]byte(`{"condition":`), data...), '}')
		b.Run(fmt.Sprintf("in-query/depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseQuery(query); err == nil {
					b.Fatal("bomb decoded")
				}
			}
		})
	}
}

func parseQuery(data []byte) (query.Query, error) { return query.ParseQuery(data) }
