// Package aggregatetest is the given/when/expect kit for aggregates:
// application code tests its aggregates' rules with it, in memory, without
// a store or a runtime.
//
//	aggregatetest.For(t, Carts).
//		Given(ItemAdded{SKU: "a", Qty: 1}).
//		When(AddItem{SKU: "a", Qty: 2}).
//		Events(ItemAdded{SKU: "a", Qty: 2}).
//		State(Cart{Items: map[string]int{"a": 3}}).
//		Version(2).
//		Fork("then remove", func(t *testing.T, s *aggregatetest.Spec[Cart]) {
//			s.When(RemoveItem{SKU: "a"}).Events(ItemRemoved{SKU: "a"})
//		})
//
// When runs the command exactly as the processor decides it: markers from
// the definition, the pre-gates in order, the handler (a panic becomes
// InternalServerError), then the effects the handler bound (aggregate.Bind),
// applied and kept as after a successful append, or, when one refuses,
// undone with the refusal as the command's error. Each returned event is encoded and decoded through
// the codec and must come back equal, so an event that would not survive
// the store is caught here. Expectations report every mismatch with a line
// diff of the JSON forms (- want, + got). Fork branches a scenario from a
// verified point into a subtest; branches never see each other's events.
package aggregatetest
