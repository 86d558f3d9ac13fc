package reminders

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/bearer"
	"github.com/devicectl/devicectl/protocol"
)

// The HTTP routes, for scripts and the web page. They take the bearer token of agent.token_file
// when one is set.
const (
	PathAnnounce  = "/announce"              // POST {"text","mac"}: say it now
	PathReminders = "/reminders"             // GET ?mac=MAC or ?user_id=USER: the reminders to come
	PathCancel    = "/reminders/{id}/cancel" // POST: cancel one
)

// Handles reports whether r is for one of the routes of Handler.
func Handles(r *http.Request) bool {
	return r.URL.Path == PathAnnounce || r.URL.Path == PathReminders || strings.HasPrefix(r.URL.Path, PathReminders+"/")
}

// Handler serves the routes; the tools' options (RegisterTools) say where devices and the store
// are. token, when not "", is required as a bearer token.
func Handler(o *ToolOptions, token string) http.Handler {
	t := newToolset(o)
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathAnnounce, func(w http.ResponseWriter, r *http.Request) {
		var in announceInput
		if !readJSON(w, r, &in) {
			return
		}
		said, err := t.announce(r.Context(), in)
		if err != nil {
			writeToolError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"said": said})
	})
	mux.HandleFunc("GET "+PathReminders, func(w http.ResponseWriter, r *http.Request) {
		loc := t.o.Scheduler.Location()
		var rs []Reminder
		var err error
		switch mac, user := r.URL.Query().Get("mac"), r.URL.Query().Get("user_id"); {
		case mac != "":
			rs, err = t.o.Store.ListDevice(r.Context(), strings.ToUpper(mac), loc)
		case user != "":
			rs, err = t.o.Store.List(r.Context(), user, loc)
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "name the device (?mac=MAC) or the user (?user_id=USER)"})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		out := make([]listed, 0, len(rs))
		for _, r := range rs {
			l := listed{ID: r.ID, Text: r.Text, Timer: r.Timer, Due: r.Due.In(loc).Format(time.RFC3339), MAC: r.MAC}
			if r.Every != nil {
				l.Every = r.Every.String()
			}
			out = append(out, l)
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST "+PathCancel, func(w http.ResponseWriter, r *http.Request) {
		ok, err := t.o.Store.Cancel(r.Context(), "", r.PathValue("id"))
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "canceled": ok})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && !bearer.Matches(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong bearer token in the Authorization header (agent.token_file)"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// maxBody bounds a request to these routes: an announcement is a sentence.
const maxBody = 16 << 10

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body is not the JSON object this route takes: " + err.Error()})
		return false
	}
	return true
}

// writeToolError answers a tool's refusal as 400 with its details, anything else as 502.
func writeToolError(w http.ResponseWriter, err error) {
	var te *agent.ToolError
	if errors.As(err, &te) && te.Code == protocol.CodeInvalidParams {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": te.Details})
		return
	}
	writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
