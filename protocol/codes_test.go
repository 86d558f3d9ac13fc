package protocol

import "testing"

// Error reads as the message, the code and the details when there are some: the text both
// halves log and a model reads.
func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{Code: CodeBusy, Message: "busy"}, "busy (-32002)"},
		{Error{Code: CodeInvalidParams, Message: "Invalid params", Details: "level: must be <= 100"},
			"Invalid params (-32602): level: must be <= 100"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
}
