package factum

// OriginHeader is the command header naming the instance whose gateway sent
// the command, and so waits for its signals. A gateway that routes signals
// across instances sets it on every command it sends, replacing any value
// the command carried (a saga's command inherits its source stream's
// header, but its wait is at the instance that sends it). The header is
// kept in the command's stream, so every function that handles the stream
// knows where its signals go. It is infrastructure: a caller's value is
// never trusted.
const OriginHeader = "Factum-Origin"
