package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// On the A2A paths a2a-go writes error.data as a list of typed details. Every error we answer
// there carries, first, a google.protobuf.Struct with {"details": "..."} that names the
// problem, as the seed's table asks; detailer adds it where a2a-go's own errors have none.

// detailer is an a2asrv.CallInterceptor that gives a2a-go's errors a details entry.
type detailer struct {
	a2asrv.PassthroughCallInterceptor
}

type payloadKey struct{}

func (detailer) Before(ctx context.Context, _ *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	return context.WithValue(ctx, payloadKey{}, req.Payload), nil, nil
}

func (detailer) After(ctx context.Context, _ *a2asrv.CallContext, resp *a2asrv.Response) error {
	if resp.Err == nil {
		return nil
	}
	var ae *a2a.Error
	if errors.As(resp.Err, &ae) && ae.Details["details"] != nil {
		return nil
	}
	resp.Err = a2a.NewError(resp.Err, resp.Err.Error()).
		WithDetails(map[string]any{"details": detailsOf(resp.Err, ctx.Value(payloadKey{}))})
	return nil
}

// detailsOf says in a sentence what is wrong with the request payload.
func detailsOf(err error, payload any) string {
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
		return "Unknown task id: " + string(id)
	case errors.Is(err, a2a.ErrTaskNotCancelable) && id != "":
		return fmt.Sprintf("Task %s is finished and cannot be canceled", id)
	case errors.Is(err, a2a.ErrInvalidParams) && strings.HasPrefix(err.Error(), "message is required"):
		return "Missing required parameter: message"
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

// precheck answers malformed JSON and unknown methods on an A2A path with details, and passes
// everything else, body intact, to a2a-go's transport.
func precheck(methods []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
		if err != nil {
			writeA2AError(w, nil, a2a.ErrInvalidRequest, fmt.Sprintf("Could not read the request body: %v", err))
			return
		}
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				writeA2AError(w, nil, a2a.ErrInvalidRequest, "The request must be a JSON-RPC object with a string method")
				return
			}
			if len(bytes.TrimSpace(body)) == 0 {
				writeA2AError(w, nil, a2a.ErrParseError, "The request body is empty")
				return
			}
			writeA2AError(w, nil, a2a.ErrParseError, "Malformed JSON: "+err.Error())
			return
		}
		if env.Method != nil && *env.Method != "" && !contains(methods, *env.Method) {
			writeA2AError(w, env.ID, a2a.ErrMethodNotFound,
				fmt.Sprintf("Method not found: %q (%s serves %s)", *env.Method, r.URL.Path, strings.Join(methods, ", ")))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var a2aCodes = map[error]int{
	a2a.ErrParseError:      codeParse,
	a2a.ErrInvalidRequest:  codeInvalidRequest,
	a2a.ErrMethodNotFound:  codeNoMethod,
	a2a.ErrInvalidParams:   codeInvalidParams,
	a2a.ErrInternalError:   codeInternal,
	a2a.ErrTaskNotFound:    -32001,
	a2a.ErrServerError:     -32000,
	a2a.ErrUnauthenticated: -31401,
}

// writeA2AError writes a JSON-RPC error in a2a-go's format: data lists the details Struct,
// then the ErrorInfo with the A2A reason.
func writeA2AError(w http.ResponseWriter, id json.RawMessage, kind error, details string) {
	if id == nil {
		id = nullID
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, struct {
		Code    int                   `json:"code"`
		Message string                `json:"message"`
		Data    []*errordetails.Typed `json:"data"`
	}{a2aCodes[kind], kind.Error() + ": " + details, []*errordetails.Typed{
		errordetails.NewFromStruct(map[string]any{"details": details}),
		errordetails.NewErrorInfo(a2a.ErrorReason(kind), a2a.ProtocolDomain, nil),
	}}}
	writeJSON(w, http.StatusOK, resp)
}
