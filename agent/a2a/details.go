package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// On the A2A paths a2a-go writes error.data as a list of typed details. Every error we answer
// there carries, first, a google.protobuf.Struct with {"details": "..."} that names the
// problem, as the seed's table asks; detailer adds it where a2a-go's own errors have none.

// detailer is an a2asrv.CallInterceptor that gives a2a-go's errors a details entry. Before
// a2a-go sets anything up for a message from the A2A paths, it applies
// agent.limits.message_bytes and refuses a message to a task whose turn still runs, or that
// continues a finished task, as A2A 1.0 says: UnsupportedOperationError (a2a-go would answer
// -32602, and fail the task). The seed routes apply their own task rules before they store the
// task (seed_task.go).
type detailer struct {
	a2asrv.PassthroughCallInterceptor
	tasks        taskStore
	turns        *turns // the turns in flight, of both doors
	maxTurns     int    // the turn limit, to explain a2a-go's limiter; 0: none
	messageBytes int64  // agent.limits.message_bytes
}

type payloadKey struct{}

func (d *detailer) Before(ctx context.Context, _ *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	ctx = context.WithValue(ctx, payloadKey{}, req.Payload)
	send, ok := req.Payload.(*a2a.SendMessageRequest)
	if !ok || send.Message == nil || seedCallFrom(ctx) != nil {
		return ctx, nil, nil
	}
	if err := checkMessageSize(send.Message, d.messageBytes); err != nil {
		return ctx, nil, err
	}
	if id := send.Message.TaskID; id != "" {
		// Its outcome stored, a turn is over, though a2a-go may not have let go of it yet. A
		// task unknown or unreadable here is a2a-go's to answer.
		if st, err := d.tasks.Get(ctx, id); err == nil && st.Task.Status.State.Terminal() {
			return ctx, nil, withDetails(a2a.ErrUnsupportedOperation,
				fmt.Sprintf("Task %s is %s and takes no more messages; send the message without taskId to start a new task",
					st.Task.ID, stateWord(st.Task.Status.State)))
		}
		if d.turns.running(string(id)) {
			return ctx, nil, invalidParams(busyDetails(id))
		}
	}
	return ctx, nil, nil
}

func (d *detailer) After(ctx context.Context, _ *a2asrv.CallContext, resp *a2asrv.Response) error {
	if resp.Err == nil {
		return nil
	}
	var ae *a2a.Error
	if errors.As(resp.Err, &ae) && ae.Details["details"] != nil {
		return nil
	}
	payload := ctx.Value(payloadKey{})
	if send, ok := payload.(*a2a.SendMessageRequest); ok && send.Message != nil &&
		strings.Contains(resp.Err.Error(), "execution is already in progress") {
		// a2a-go's own check, for a message that came in as another's turn started.
		resp.Err = invalidParams(busyDetails(send.Message.TaskID))
		return nil
	}
	resp.Err = a2a.NewError(resp.Err, resp.Err.Error()).
		WithDetails(map[string]any{"details": d.detailsOf(resp.Err, payload)})
	return nil
}

// stateWord is a task state as a word: "completed" for TASK_STATE_COMPLETED.
func stateWord(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// detailsOf says in a sentence what is wrong with the request payload.
func (d *detailer) detailsOf(err error, payload any) string {
	var id a2a.TaskID
	switch p := payload.(type) {
	case *a2a.GetTaskRequest:
		id = p.ID
	case *a2a.CancelTaskRequest:
		id = p.ID
	case *a2a.SubscribeToTaskRequest:
		id = p.ID
	}
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound) && id != "":
		return unknownTaskDetails(string(id))
	case errors.Is(err, a2a.ErrTaskNotCancelable) && id != "":
		return fmt.Sprintf("Task %s is finished and cannot be canceled", id)
	case errors.Is(err, a2a.ErrInvalidParams) && strings.HasPrefix(err.Error(), "message is required"):
		return "Missing required parameter: message"
	case strings.Contains(err.Error(), "concurrency quota exceeded"):
		// a2a-go's limiter, at twice the agent's own turn limit.
		return turnLimitDetails(d.maxTurns)
	}
	return err.Error()
}

// The methods each A2A path serves, to name an unknown one before a2a-go answers without details.
var (
	methodsV1 = []string{"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
		"SubscribeToTask", "GetTaskPushNotificationConfig", "CreateTaskPushNotificationConfig",
		"ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard"}
	methodsV03 = []string{"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
		"tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/set",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
		"agent/getAuthenticatedExtendedCard"}
)

// precheck answers on an A2A path what a2a-go's transport would answer badly or not at all, and
// passes everything else, body intact, to it:
//   - what readEnvelope refuses (a body that is not JSON-RPC 2.0 text), with details;
//   - a notification (a request without an id member): JSON-RPC 2.0 forbids an answer, so it
//     gets 204 and no body, and is not run: every A2A method answers something, and a turn
//     nobody hears would only cost;
//   - an unknown method, with the ones the path serves;
//   - ListTasks' parameters a2a-go reads wrongly or not at all (see listTasksParams).
//
// It also makes every answer application/json: a2a-go's 0.3 transport writes its errors without
// the header (its streams set their own).
func precheck(methods []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		env, err := readEnvelope(w, r)
		body := env.body
		switch {
		case err != nil:
			writeA2AError(w, env.ID, err)
			return
		case env.ID == nil:
			w.Header().Del("Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		case !slices.Contains(methods, env.Method):
			writeA2AError(w, env.ID, withDetails(a2a.ErrMethodNotFound,
				fmt.Sprintf("Method not found: %q (%s serves %s)", env.Method, r.URL.Path, strings.Join(methods, ", "))))
			return
		case env.Method == methodListTasks:
			params, details := listTasksParams(env.Params)
			if details != "" {
				writeA2AError(w, env.ID, withDetails(a2a.ErrInvalidParams, details))
				return
			}
			if body, err = withParams(body, params); err != nil {
				writeA2AError(w, env.ID, withDetails(a2a.ErrInternalError, err.Error()))
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

const methodListTasks = "ListTasks"

// listTasksParams checks ListTasks' parameters where a2a-go cannot, as a2a.proto's
// ListTasksRequest says: an explicit pageSize 0 is below the minimum of 1 (only an unset one
// means 50), a timestamp a2a-go could not parse is a bad parameter (a2a-go says parse error), a
// value of the wrong type is named. A status that filters nothing ("UNRECOGNIZED", which
// @a2a-js/sdk 1.x sends when given none, or TASK_STATE_UNSPECIFIED) and null fields are removed.
// It returns the parameters to pass on, or details of what is wrong.
func listTasksParams(raw json.RawMessage) (json.RawMessage, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, ""
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, "params must be an object"
	}
	for k, v := range p {
		if string(v) == "null" {
			delete(p, k)
			continue
		}
		var bad bool
		switch k {
		case "pageSize", "historyLength":
			var n float64
			if json.Unmarshal(v, &n) != nil || n != math.Trunc(n) || math.Abs(n) > math.MaxInt32 {
				return nil, fmt.Sprintf("%s must be a whole number, got %s", k, v)
			}
			if k == "pageSize" && n == 0 {
				return nil, fmt.Sprintf("pageSize must be from 1 to %d (unset: %d), got 0", maxPageSize, defaultPageSize)
			}
		case "statusTimestampAfter":
			var ts time.Time
			if json.Unmarshal(v, &ts) != nil {
				return nil, fmt.Sprintf(`statusTimestampAfter must be an RFC 3339 timestamp such as "2023-10-27T10:00:00Z", got %s`, v)
			}
		case "status":
			var st string
			bad = json.Unmarshal(v, &st) != nil
			if !bad && noStatusFilter[a2a.TaskState(st)] {
				delete(p, k)
			}
		case "contextId", "pageToken", "tenant":
			var str string
			bad = json.Unmarshal(v, &str) != nil
		case "includeArtifacts":
			var b bool
			bad = json.Unmarshal(v, &b) != nil
		}
		if bad {
			return nil, fmt.Sprintf("%s has the wrong type: %s", k, v)
		}
	}
	out, err := json.Marshal(p)
	if err != nil {
		return nil, err.Error()
	}
	return out, ""
}

// withParams returns the JSON-RPC request body with its params replaced.
func withParams(body []byte, params json.RawMessage) ([]byte, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("re-reading the request: %w", err)
	}
	if params == nil {
		delete(req, "params")
	} else {
		req["params"] = params
	}
	return json.Marshal(req)
}

// writeA2AError writes err, an a2a-go error made by withDetails, in a2a-go's format: data
// lists the details Struct, then the ErrorInfo with the A2A reason.
func writeA2AError(w http.ResponseWriter, id json.RawMessage, err error) {
	if id == nil {
		id = nullID
	}
	kind, code := a2a.ErrInternalError, codeInternal
	for k, c := range a2aCodes {
		if errors.Is(err, k) {
			kind, code = k, c
			break
		}
	}
	details := errDetails(err)
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, struct {
		Code    int                   `json:"code"`
		Message string                `json:"message"`
		Data    []*errordetails.Typed `json:"data"`
	}{code, kind.Error() + ": " + details, []*errordetails.Typed{
		errordetails.NewFromStruct(map[string]any{"details": details}),
		errordetails.NewErrorInfo(a2a.ErrorReason(kind), a2a.ProtocolDomain, nil),
	}}}
	writeJSON(w, http.StatusOK, resp)
}
