// Package providertest is a conformance harness for [agent.Provider]
// adapters that talk to a loopback [llmtest] server: the error mapping,
// cancellation, connection failure, request validation, concurrency,
// round-trip property, fuzz and benchmark checks that every provider in
// this module must pass, written once and run by each provider's own _test
// files through a [Harness].
//
// It is a normal package so that the _test files of several packages can
// import it; nothing outside provider/ can (it is internal), and nothing
// but tests should. Wire-format checks stay in each provider's tests: they
// are what differs between providers.
package providertest
