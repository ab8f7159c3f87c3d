package sqlite

import (
	"context"
	"reflect"
	"testing"

	"github.com/factum-go/factum/projection"
)

// State reads the state as last committed, every time: a caller that
// changes the state it got (its builds' table lists) changes nothing for
// the next reader, and a saved state is read at once, whoever saved it.
func TestProjectionStateReadsTheCommittedState(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t, Options{})
	st, err := NewProjectionStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewProjectionStore(ctx, db, "shop") // another store, the same table
	if err != nil {
		t.Fatal(err)
	}
	save := func(s projection.State) {
		t.Helper()
		tx, err := other.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.SaveState(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	read := func() projection.State {
		t.Helper()
		s, err := st.State(ctx, "summaries")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := projection.State{Name: "summaries", Live: projection.Build{Number: 1, Version: 1, Tables: []string{"a_1", "b_1"}}, Last: 1}
	second := projection.State{Name: "summaries", Live: first.Live,
		Next: projection.Build{Number: 2, Version: 2, Tables: []string{"a_2"}}, Last: 2}
	for _, step := range []struct {
		name string
		save *projection.State
		want projection.State
	}{
		{"no state yet", nil, projection.State{Name: "summaries"}},
		{"saved", &first, first},
		{"read again", nil, first},
		{"saved anew", &second, second},
		{"read again after the change", nil, second},
	} {
		if step.save != nil {
			save(*step.save)
		}
		got := read()
		if !reflect.DeepEqual(got, step.want) {
			t.Errorf("%s: %+v, want %+v", step.name, got, step.want)
		}
		// The caller's changes stay its own.
		for _, b := range []*projection.Build{&got.Live, &got.Next} {
			for i := range b.Tables {
				b.Tables[i] = "changed"
			}
		}
	}
}
