// Package notify is the example service's event handler that talks to
// the outside world, and so fails: a welcome mail sent through a mail
// relay when a user registers. It gives the compensation records of the
// operator console something real to show.
//
// The relay is a stub with two realistic failures. Mail to a domain under
// the reserved top-level domain ".invalid" (RFC 2606) is refused for good
// (550, an IllegalArgument error, which the consumer does not retry in
// place): compensation records it at once and an operator marks it
// unrecoverable or changes the address. Mail to a greylisting domain
// (greylist.example by default) is deferred (451, TooManyRequests, which
// is retried) for the first Deferrals deliveries to each recipient, as
// greylisting mail servers do: the consumer's in-place attempts fail, the
// failure is recorded, and a later retry by compensation (the scheduler's
// or an operator's forced one) delivers.
//
// A delivery is keyed by the event's ID, so a redelivered event sends no
// second mail.
package notify
