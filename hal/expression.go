package hal

// Expression is what a Face shows. Its string value is the name used on the
// wire (the set_virtual_human_expression tool's enum).
type Expression string

// The expressions every Face supports.
const (
	CloseEyesSmile Expression = "close_eyes_smile"
	CloseEyes      Expression = "close_eyes"
	Amazed         Expression = "amazed"
	Smile          Expression = "smile"
	Cry            Expression = "cry"
	Idle           Expression = "idle"
)

// Expressions returns the six expressions in a fixed order (the order of the
// tool's enum). The slice is fresh on each call, so callers may modify it.
func Expressions() []Expression {
	return []Expression{CloseEyesSmile, CloseEyes, Amazed, Smile, Cry, Idle}
}

// Valid reports whether e is one of Expressions().
func (e Expression) Valid() bool {
	switch e {
	case CloseEyesSmile, CloseEyes, Amazed, Smile, Cry, Idle:
		return true
	}
	return false
}
