package device

// State is where the agent's session loop is.
type State int32

const (
	Idle        State = iota // not started
	Connecting               // dialling the server
	Registering              // connected, mcp/registerTools sent, waiting for the answer
	Registered               // serving calls and messages
	BackingOff               // waiting before the next attempt
	Stopping                 // draining running calls before closing
	Stopped                  // Run has returned
)

var stateNames = [...]string{"idle", "connecting", "registering", "registered", "backing off", "stopping", "stopped"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}
