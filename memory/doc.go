// Package memory is the in-memory storage: the stores of any number of
// bounded contexts, with the same methods as sqlite.DB and postgres.DB, so
// that a test or a demo swaps one line to change backend. Nothing survives
// the process.
//
//	db := memory.New()
//	eng, _ := engine.New(engine.Config{Storage: db}, Carts)
package memory
