package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// seedParams are tasks/send's params once checked: the message's parts as sent (text parts
// only, none of them all empty).
type seedParams struct {
	ID            a2a.TaskID
	SessionID     string
	Parts         []*a2a.Part
	HistoryLength *int
	Metadata      map[string]any
}

// field decodes one optional member of params; a JSON null counts as absent. prefix names the
// object in the details ("message.").
func field[T any](obj map[string]json.RawMessage, prefix, name, what string) (v T, present bool, err error) {
	raw, ok := obj[name]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), nullID) {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, true, invalidParams(fmt.Sprintf("%s%s must be %s, got %s", prefix, name, what, raw))
	}
	return v, true, nil
}

func paramsObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), nullID) {
		return nil, invalidParams("Missing required parameter: params")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, invalidParams(fmt.Sprintf("params must be an object, got %s", raw))
	}
	return obj, nil
}

// historyLengthParam reads the optional historyLength.
func historyLengthParam(obj map[string]json.RawMessage) (*int, error) {
	n, present, err := field[int](obj, "", "historyLength", "a non-negative integer")
	switch {
	case err != nil:
		return nil, err
	case !present:
		return nil, nil
	case n < 0:
		return nil, invalidParams(fmt.Sprintf("historyLength must be a non-negative integer, got %d", n))
	}
	return &n, nil
}

// parseSendParams checks tasks/send's params and names the first problem.
func parseSendParams(raw json.RawMessage) (*seedParams, error) {
	obj, err := paramsObject(raw)
	if err != nil {
		return nil, err
	}
	p := &seedParams{}
	id, _, err := field[string](obj, "", "id", "a string")
	if err != nil {
		return nil, err
	}
	p.ID = a2a.TaskID(id)
	if p.SessionID, _, err = field[string](obj, "", "sessionId", "a string"); err != nil {
		return nil, err
	}
	if p.HistoryLength, err = historyLengthParam(obj); err != nil {
		return nil, err
	}
	if p.Metadata, _, err = field[map[string]any](obj, "", "metadata", "an object"); err != nil {
		return nil, err
	}
	for _, key := range []string{"mac", "user_id"} {
		if _, err := metaString(key, p.Metadata); err != nil {
			return nil, invalidParams(err.Error())
		}
	}

	msg, present, err := field[map[string]json.RawMessage](obj, "", "message", "an object")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, invalidParams("Missing required parameter: message")
	}
	role, present, err := field[string](msg, "message.", "role", "a string")
	switch {
	case err != nil:
		return nil, err
	case !present:
		return nil, invalidParams("Missing required parameter: message.role")
	case role != "user":
		return nil, invalidParams(fmt.Sprintf(`message.role must be "user", got %q`, role))
	}
	parts, present, err := field[[]map[string]json.RawMessage](msg, "message.", "parts", "an array of objects")
	switch {
	case err != nil:
		return nil, err
	case !present || len(parts) == 0:
		return nil, invalidParams("Missing required parameter: message.parts")
	}
	hasText := false
	for i, part := range parts {
		typ, _, err := field[string](part, "", "type", "a string")
		if err != nil {
			return nil, invalidParams(fmt.Sprintf("message.parts[%d].type must be a string", i))
		}
		if typ != "text" {
			return nil, invalidParams(fmt.Sprintf(`Unsupported part type %q in message.parts[%d]: only "text" parts are accepted`, typ, i))
		}
		text, present, err := field[string](part, "", "text", "a string")
		if err != nil {
			return nil, invalidParams(fmt.Sprintf("message.parts[%d].text must be a string", i))
		}
		if !present {
			return nil, invalidParams(fmt.Sprintf("Missing required parameter: message.parts[%d].text", i))
		}
		p.Parts = append(p.Parts, a2a.NewTextPart(text))
		hasText = hasText || strings.TrimSpace(text) != ""
	}
	if !hasText {
		return nil, invalidParams("The message has no text: every message.parts[].text is empty")
	}
	return p, nil
}

// parseTaskIDParams checks the params of tasks/get and tasks/cancel.
func parseTaskIDParams(raw json.RawMessage) (id a2a.TaskID, historyLength *int, err error) {
	obj, err := paramsObject(raw)
	if err != nil {
		return "", nil, err
	}
	s, present, err := field[string](obj, "", "id", "a string")
	if err != nil {
		return "", nil, err
	}
	if !present || s == "" {
		return "", nil, invalidParams("Missing required parameter: id")
	}
	if historyLength, err = historyLengthParam(obj); err != nil {
		return "", nil, err
	}
	return a2a.TaskID(s), historyLength, nil
}
