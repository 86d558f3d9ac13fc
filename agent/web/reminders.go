//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/protocol"
)

// maxListed bounds the reminders the page is sent per device; past it the answer says how many
// more there are, so that a device with thousands costs the page a count, not a list.
const maxListed = 50

// reminderView is one reminder as the page shows it.
type reminderView struct {
	ID    string `json:"id"`
	Text  string `json:"text,omitempty"`
	Timer bool   `json:"timer,omitempty"`
	Due   string `json:"due"`  // RFC 3339, in the agent's time zone
	When  string `json:"when"` // the clock time there, e.g. "Thu 26 Nov 19:00"
	Every string `json:"every,omitempty"`
}

// deviceReminders is what GET /web/reminders answers for one device.
type deviceReminders struct {
	MAC       string         `json:"mac"`
	Reminders []reminderView `json:"reminders"`
	More      int            `json:"more,omitempty"` // how many more than maxListed there are
	Err       string         `json:"error,omitempty"`
}

// serveReminders lists the reminders of each device the page shows (a device away may come
// back in time for its reminders). A device whose reminders cannot be read says so in its own
// entry, without failing the others.
func (h *Handler) serveReminders(w http.ResponseWriter, r *http.Request) {
	macs := h.st.macs()
	out := make([]deviceReminders, 0, len(macs))
	for _, mac := range macs {
		d := deviceReminders{MAC: mac, Reminders: []reminderView{}}
		rs, err := h.opts.Reminders.Reminders(r.Context(), mac)
		if err != nil {
			if r.Context().Err() != nil {
				return // the page left
			}
			h.log.Warn("reading a device's reminders for the page", "mac", mac, "err", err)
			d.Err = "the reminders could not be read: " + err.Error()
		}
		if len(rs) > maxListed {
			d.More = len(rs) - maxListed
			rs = rs[:maxListed]
		}
		for _, rm := range rs {
			d.Reminders = append(d.Reminders, reminderView{
				ID: rm.ID, Text: cutText(rm.Text, 2<<10), Timer: rm.Timer, Every: rm.Every,
				Due: rm.Due.Format("2006-01-02T15:04:05Z07:00"), When: rm.Due.Format("Mon 2 Jan 15:04"),
			})
		}
		out = append(out, d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": out})
}

// serveCancel cancels one reminder: {"id","canceled"}.
func (h *Handler) serveCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ok, err := h.opts.Reminders.CancelReminder(r.Context(), id)
	if err != nil {
		h.log.Warn("canceling a reminder from the page", "id", id, "err", err)
		http.Error(w, fmt.Sprintf("canceling the reminder %s: %v", id, err), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "canceled": ok})
}

// serveAnnounce makes a device say the text now, with no turn: {"said": [MAC, ...]}.
func (h *Handler) serveAnnounce(w http.ResponseWriter, r *http.Request) {
	req, ok := readSay(w, r, "write what the device should say")
	if !ok {
		return
	}
	said, err := h.opts.Reminders.Announce(r.Context(), req.MAC, req.Text)
	if err != nil {
		var te *agent.ToolError
		if errors.As(err, &te) && te.Code == protocol.CodeInvalidParams {
			http.Error(w, te.Details, http.StatusBadRequest)
			return
		}
		http.Error(w, "the device did not say it: "+err.Error(), http.StatusBadGateway)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"said": said})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // our own views always encode
		panic(fmt.Sprintf("web: encoding an answer: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
