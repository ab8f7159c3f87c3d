package built

// EncodedState vouches for a snapshot's state: encoding/json made it from
// an aggregate's state in the aggregate executor (Definition.ToStored,
// which the executor reports to the snapshotter), so it is valid JSON by
// construction (json.Marshal checks what a Marshaler or a RawMessage
// gives it). A snapshot store's front end then skips json.Valid over the
// state, half the cost of its checks. Only the snapshotter passes one, and
// only for states the executor reported; the package is internal and the
// blank field keeps an untyped struct{}{} from converting to it, so no
// caller outside the module can.
type EncodedState struct{ _ bool }

// StateSaver is a snapshot store that saves vouched states; the method
// taking an EncodedState is declared by the store (the snapshot package's
// front end), which the snapshotter asserts against its own interface, as
// this package cannot name the snapshot type.
//
// Embedding promotes the methods into the embedding type, which may
// override Save (a wrapper adding its own checks): Owns tells whether they
// are the store's own.
type StateSaver interface {
	// BuiltStateOwner returns OwnedBy(the store declaring the method).
	BuiltStateOwner() Owner
}

// Owns reports whether store declares the methods of s itself, rather
// than having them promoted from a store it embeds.
func Owns(store any, s StateSaver) bool { return s.BuiltStateOwner().store == store }
