// Package component is the contract between an engine and the parts of an
// application that live with it (the snapshotter, compensation, SQL
// projections): what a component learns of the engine (Env), what it
// brings (Parts), and its lifecycle (Component: Setup, Attach, Run).
//
// The package imports no engine, so a component the engine itself uses by
// default (the snapshotter) can implement the contract without an import
// cycle. Such a component is a Component[Host]: it sees the engine at
// Attach through the Host interface. Components written against the engine
// package are engine.Component, which is Component[*engine.Engine], and
// engine.Env and engine.Parts are this package's Env and Parts.
package component
