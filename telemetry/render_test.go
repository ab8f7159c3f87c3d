package telemetry_test

import (
	"bytes"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// renderTimeline draws a trace as an SVG timeline, one row per span in
// depth-first order, indented by depth, a bar from its start to its end
// on a common time axis: the picture of docs/operations.md.
func renderTimeline(spans tracetest.SpanStubs) []byte {
	if len(spans) == 0 {
		return nil
	}
	children := map[trace.SpanID][]tracetest.SpanStub{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	var roots []tracetest.SpanStub
	start, end := spans[0].StartTime, spans[0].EndTime
	for _, s := range spans {
		if ids[s.Parent.SpanID()] {
			children[s.Parent.SpanID()] = append(children[s.Parent.SpanID()], s)
		} else {
			roots = append(roots, s)
		}
		if s.StartTime.Before(start) {
			start = s.StartTime
		}
		if s.EndTime.After(end) {
			end = s.EndTime
		}
	}
	byStart := func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) }
	type row struct {
		s     tracetest.SpanStub
		depth int
	}
	var rows []row
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		rows = append(rows, row{s, depth})
		cs := children[s.SpanContext.SpanID()]
		slices.SortFunc(cs, byStart)
		for _, c := range cs {
			walk(c, depth+1)
		}
	}
	slices.SortFunc(roots, byStart)
	for _, r := range roots {
		walk(r, 0)
	}
	const (
		width, label, rowH, top = 1000.0, 420.0, 22.0, 40.0
	)
	total := end.Sub(start)
	if total <= 0 {
		total = time.Microsecond
	}
	x := func(t time.Time) float64 { return label + (width-label-20)*float64(t.Sub(start))/float64(total) }
	colour := map[trace.SpanKind]string{
		trace.SpanKindInternal: "#9e9e9e", trace.SpanKindServer: "#5c6bc0", trace.SpanKindClient: "#26a69a",
		trace.SpanKindProducer: "#ffa726", trace.SpanKindConsumer: "#42a5f5",
	}
	var b bytes.Buffer
	h := top + rowH*float64(len(rows)) + 30
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="monospace" font-size="12">`+"\n", width, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">trace %s: %d spans, %v</text>`+"\n", spans[0].SpanContext.TraceID(), len(spans), total.Round(time.Microsecond))
	for i, r := range rows {
		y := top + rowH*float64(i)
		name := strings.Repeat("  ", r.depth) + r.s.Name
		fmt.Fprintf(&b, `<text x="10" y="%.0f" xml:space="preserve">%s</text>`+"\n", y+14, html.EscapeString(name))
		x0, x1 := x(r.s.StartTime), x(r.s.EndTime)
		w := max(x1-x0, 1)
		fill := colour[r.s.SpanKind]
		if r.s.Status.Code == 1 { // codes.Error
			fill = "#e53935"
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s"/>`+"\n", x0, y+3, w, rowH-6, fill)
		lx, anchor := x1+4, "start" // the duration after the bar, or before it at the right edge
		if lx > width-60 {
			lx, anchor = x0-4, "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10" fill="#333" text-anchor="%s">%v</text>`+"\n", lx, y+14, anchor, r.s.EndTime.Sub(r.s.StartTime).Round(time.Microsecond))
	}
	fmt.Fprintf(&b, `<text x="10" y="%.0f" font-size="10" fill="#555">orange: send (producer) · blue: process / function (consumer) · green: store (client) · grey: load, decide (internal) · red: error</text>`+"\n", h-10)
	b.WriteString("</svg>\n")
	return b.Bytes()
}
