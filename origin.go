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

// OriginWaitHeader is the command header naming the stage the wait at the
// command's origin is for (its wire name, such as "PROCESSED"), so that
// the functions that handle the command's stream at other instances send
// the origin only the signals that wait can use (see command.WaitUses). A
// gateway that routes signals across instances sets it beside
// OriginHeader on every command it sends with a wait, and deletes it from
// every other (a saga's command inherits its source stream's header, but
// not its wait). Without it every signal travels: an instance that does
// not set it, or a producer outside factum, gets them all. Like
// OriginHeader it is kept in the command's stream, and a caller's value
// is never trusted.
const OriginWaitHeader = "Factum-Origin-Wait"

// OriginWait returns the stage header's OriginWaitHeader names, or 0
// when it names none (absent, or not a stage's wire name), which means
// that every signal travels. Signal makers copy it into Signal.OriginWait.
func OriginWait(header map[string]string) CommandStage {
	v, ok := header[OriginWaitHeader]
	if !ok {
		return 0
	}
	for i := 1; i < len(stageNames); i++ {
		if stageNames[i] == v {
			return CommandStage(i)
		}
	}
	return 0
}
