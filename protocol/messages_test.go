package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/devicectl/devicectl/protocol"
)

// The shapes encode to the wire examples of docs/protocol.md, member for member.
func TestMessagesOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{protocol.RegisterParams[[]string]{MAC: "AA-BB-CC-DD-EE-FF", Tools: []string{}}, `{"mac_addr":"AA-BB-CC-DD-EE-FF","tools":[]}`},
		{protocol.RegisterResult{Status: protocol.StatusRegistered, Message: "Tools were successfully registered."},
			`{"status":"registered","message":"Tools were successfully registered."}`},
		{protocol.RegisterResult{Status: protocol.StatusRegistered, Features: []string{protocol.FeatureUserText, protocol.FeatureUserAudio}},
			`{"status":"registered","message":"","features":["user/text","user/audio"]}`},
		{protocol.ExecuteParams{ToolName: protocol.ToolVolume, ToolInput: json.RawMessage(`{"level":80}`)},
			`{"tool_name":"amplify_volume","tool_input":{"level":80}}`},
		{protocol.ExecuteResult{Status: protocol.StatusSuccess, Message: "音量已成功设置为 80"}, `{"status":"success","message":"音量已成功设置为 80"}`},
		{protocol.AIMessage{Type: protocol.MessageChunk, Content: "北京"}, `{"type":"chunk","content":"北京"}`},
		{protocol.UserTextParams{Text: "hello"}, `{"text":"hello"}`},
		{protocol.UserTextParams{Text: "hello", Lang: "en", Source: protocol.SourceVoice}, `{"text":"hello","lang":"en","source":"voice"}`},
		{protocol.UserAudioParams{Format: protocol.AudioFormat, Rate: protocol.AudioRate, Channels: 1, Audio: []byte{1, 0, 0xff, 0xff}},
			`{"format":"pcm_s16le","rate":16000,"channels":1,"audio":"AQD//w=="}`},
		{protocol.UserResult{Status: protocol.StatusEmpty}, `{"status":"empty"}`},
		{protocol.UserResult{Status: protocol.StatusAccepted, Text: "hi", TurnID: "turn-1"}, `{"status":"accepted","text":"hi","turn_id":"turn-1"}`},
		{protocol.ErrorData{Details: "level: 120 is above the maximum 100"}, `{"details":"level: 120 is above the maximum 100"}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T encodes as %s, %v; want %s", tc.v, b, err, tc.want)
		}
	}
}
