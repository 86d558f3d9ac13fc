//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/agent/web"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// webReminders is the web page's view of the reminders and its Announce button (web.Reminders).
// Announcing goes through the local announce tool, the path of the console's say and POST
// /announce.
type webReminders struct {
	sf    *speaksFirst
	local *tools.Registry
}

var _ web.Reminders = webReminders{}

func (w webReminders) Reminders(ctx context.Context, mac string) ([]web.Reminder, error) {
	loc := w.sf.sched.Location()
	rs, err := w.sf.store.ListDevice(ctx, mac, loc)
	if err != nil {
		return nil, err
	}
	out := make([]web.Reminder, 0, len(rs))
	for _, r := range rs {
		v := web.Reminder{ID: r.ID, Text: r.Text, Timer: r.Timer, Due: r.Due.In(loc)}
		if r.Every != nil {
			v.Every = r.Every.String()
		}
		out = append(out, v)
	}
	return out, nil
}

func (w webReminders) CancelReminder(ctx context.Context, id string) (bool, error) {
	return w.sf.store.Cancel(ctx, "", id)
}

func (w webReminders) Announce(ctx context.Context, mac, text string) ([]string, error) {
	in, err := json.Marshal(map[string]string{"text": text, "mac": mac})
	if err != nil {
		return nil, err
	}
	p, err := w.local.Prepare(reminders.ToolAnnounce, in)
	if pe := (*tools.ParamsError)(nil); errors.As(err, &pe) {
		return nil, &agent.ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: pe.Details}
	} else if err != nil {
		return nil, err
	}
	v, err := p.Invoke(ctx)
	if err != nil {
		return nil, err
	}
	said, ok := v.([]string)
	if !ok {
		return nil, fmt.Errorf("the announce tool answered %T, not the devices that said it", v)
	}
	return said, nil
}
