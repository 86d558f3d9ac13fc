package builtin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

type statusInput struct{}

type statusResult struct {
	// Status is "success", or "partial" when a reading failed (see Errors):
	// what could be read is still worth reporting.
	Status        string         `json:"status"`
	Message       string         `json:"message"`
	Volume        *int           `json:"volume,omitempty"`     // absent without a speaker or when unreadable
	Expression    hal.Expression `json:"expression,omitempty"` // absent without a face or when unreadable
	UptimeSeconds int64          `json:"uptime_seconds"`
	Uptime        string         `json:"uptime"`
	Version       string         `json:"version"`
	Connection    string         `json:"connection"`
	Errors        []string       `json:"errors,omitempty"`
}

// statusTool reads the speaker and the face, so it declares them as
// resources even though it only reads: the hal interfaces do not promise
// that a backend tolerates a read during a write (a bus transaction, an
// amixer run), and the resource lock is what serialises access. It also
// means a status query reports a change that is in progress only once it is
// done. The cost, waiting behind a slow control call, is bounded by that
// call's timeout.
func statusTool(o *Options, txt *text) (*tools.Tool, error) {
	t, err := tools.Func(tools.Declaration{
		Name:        protocol.ToolStatus,
		Description: txt.status,
		MainType:    tools.Remote,
		SubType:     tools.Query,
	}, func(ctx context.Context, _ statusInput) (statusResult, error) {
		return readStatus(ctx, o, txt), nil
	})
	if err != nil {
		return nil, err
	}
	if o.Face != nil {
		t.Resources = append(t.Resources, ResourceFace)
	}
	if o.Speaker != nil {
		t.Resources = append(t.Resources, ResourceSpeaker)
	}
	return t, nil
}

func readStatus(ctx context.Context, o *Options, txt *text) statusResult {
	up := max(time.Since(o.Start), 0).Truncate(time.Second)
	res := statusResult{
		Status:        protocol.StatusSuccess,
		UptimeSeconds: int64(up / time.Second),
		Uptime:        humanUptime(up, txt),
		Version:       o.Version,
		Connection:    o.ConnState(),
	}
	var parts []string
	if o.Speaker != nil {
		if v, err := o.Speaker.Volume(ctx); err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf(txt.statusVolumeErr, err))
		} else {
			res.Volume = &v
			parts = append(parts, fmt.Sprintf(txt.statusVolume, v))
		}
	}
	if o.Face != nil {
		if e, err := o.Face.Expression(ctx); err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf(txt.statusExprErr, err))
		} else {
			res.Expression = e
			parts = append(parts, fmt.Sprintf(txt.statusExpression, e))
		}
	}
	parts = append(parts,
		fmt.Sprintf(txt.statusUptime, res.Uptime),
		fmt.Sprintf(txt.statusVersion, res.Version),
		fmt.Sprintf(txt.statusConnection, res.Connection))
	parts = append(parts, res.Errors...)
	if len(res.Errors) > 0 {
		res.Status = "partial"
	}
	res.Message = capitalize(strings.Join(parts, txt.statusSeparator))
	return res
}

// humanUptime writes d from its largest non-zero unit down to seconds:
// "1天2小时0分5秒", "1d 2h 0m 5s", "42s".
func humanUptime(d time.Duration, txt *text) string {
	s := int64(d / time.Second)
	units := []struct {
		n    int64
		name string
	}{
		{s / 86400, txt.days},
		{s % 86400 / 3600, txt.hours},
		{s % 3600 / 60, txt.mins},
		{s % 60, txt.secs},
	}
	var out []string
	for i, u := range units {
		if u.n == 0 && len(out) == 0 && i < len(units)-1 {
			continue
		}
		out = append(out, strconv.FormatInt(u.n, 10)+u.name)
	}
	return strings.Join(out, txt.unitSep)
}

// capitalize upper-cases the first letter, for English sentences built
// from parts; it leaves Chinese unchanged.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
