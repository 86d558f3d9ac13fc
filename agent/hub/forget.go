package hub

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/devicectl/devicectl/internal/bearer"
	"github.com/devicectl/devicectl/protocol"
)

// DevicesPath starts the paths of the hub's HTTP routes: POST /devices/{mac}/forget.
const DevicesPath = "/devices/"

// ForgetHandler serves POST /devices/{mac}/forget, which calls Forget: the operator's way, over
// HTTP, to free a MAC bound to a device that was replaced. With token set a request must carry it
// as "Authorization: Bearer <token>" (agent.token_file); a browser's cross-origin request is
// refused either way. It answers 200 with {"mac":"...","forgotten":true|false}, or an error
// status with {"error":"..."}.
func (h *Hub) ForgetHandler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+DevicesPath+"{mac}/forget", func(w http.ResponseWriter, r *http.Request) {
		if token != "" && !bearer.Matches(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
			writeJSONError(w, http.StatusUnauthorized, "missing or wrong bearer token in the Authorization header (agent.token_file)")
			return
		}
		mac, err := protocol.ParseMAC(r.PathValue("mac"))
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, err.Error())
			return
		}
		was, err := h.Forget(r.Context(), mac)
		if err != nil {
			h.log.Error("forgetting a device binding", "mac", mac, "err", err)
			writeJSONError(w, http.StatusInternalServerError, "the binding of "+mac+" could not be removed; the server logged why")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"mac": mac, "forgotten": was})
	})
	// The route changes state: a page in a browser must not be able to post to it.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusForbidden, "cross-origin requests are refused")
	}))
	return cop.Handler(mux)
}

// Handles reports whether r is for one of the hub's HTTP routes (under DevicesPath).
func Handles(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, DevicesPath) }

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":"encoding the answer failed"}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
