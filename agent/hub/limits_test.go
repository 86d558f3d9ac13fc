package hub_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// declarations returns n valid tools, each with a schema of about pad bytes; with badLast the last
// one's schema does not resolve, which only compiling the schemas finds out.
func declarations(n, pad int, badLast bool) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		prop := `{"type":"string","description":"` + strings.Repeat("x", pad) + `"}`
		if badLast && i == n-1 {
			prop = `{"$ref":"#/nowhere"}`
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"Tool %d.","main_type":"remote","sub_type":"query",`+
			`"parameters":{"type":"object","properties":{"p":%s}}}`, i, i, prop)
	}
	b.WriteString("]")
	return b.String()
}

// declarationsOf returns two tools of about size bytes in all (the first one's schema padded).
func declarationsOf(size int, badLast bool) string {
	d := declarations(2, 0, badLast)
	return strings.Replace(d, `"description":""}`, `"description":"`+strings.Repeat("x", size-len(d))+`"}`, 1)
}

// refusal registers params and returns the refusal's data.details; it fails the test when
// the registration is accepted.
func refusal(t *testing.T, d *hubtest.Device, params string) string {
	t.Helper()
	m, err := d.RegisterRaw(ctxFor(t), json.RawMessage(params))
	if !errors.Is(err, hubtest.ErrRefused) {
		t.Fatalf("registration of %d bytes: %v, want a refusal", len(params), err)
	}
	var data struct{ Details string }
	if m.Error.Code != -32602 || m.Error.Data == nil || json.Unmarshal(*m.Error.Data, &data) != nil {
		t.Fatalf("refusal %+v, want -32602 with data.details", m.Error)
	}
	return data.Details
}

func params(mac, tools string) string {
	return `{"mac_addr":"` + mac + `","tools":` + tools + `}`
}

// A device may declare at most Options.MaxTools tools, and at most Options.MaxSchemaBytes of
// them; past either the registration is refused, naming the limit, its value and what was sent.
func TestToolLimits(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, &hub.Options{MaxTools: 4, MaxSchemaBytes: 4000})
	d := hubtest.Connect(t, url, nil)

	details := refusal(t, d, params(macA, declarations(5, 10, false)))
	if want := "5 tools declared: at most 4 are allowed per device (agent.limits.tools_per_device)"; details != want {
		t.Errorf("5 tools: %q, want %q", details, want)
	}
	big := declarationsOf(4100, false) // over the limit, within the slack for the rest of params
	details = refusal(t, d, params(macA, big))
	if want := fmt.Sprintf("the tool declarations are %d bytes: at most 4000 are allowed (agent.limits.schema_bytes)", len(big)); details != want {
		t.Errorf("%d bytes: %q, want %q", len(big), details, want)
	}
	// A registration far over the limit is refused on its length alone, before its MAC is read.
	huge := declarations(3, 5000, false)
	details = refusal(t, d, params("not a MAC", huge))
	if !strings.Contains(details, "at most 4000 bytes (agent.limits.schema_bytes)") || !strings.Contains(details, fmt.Sprint(len(params("not a MAC", huge)))) {
		t.Errorf("a huge registration: %q, want the size and the limit", details)
	}

	// Within both limits the same line registers.
	if _, err := d.Register(ctxFor(t), macA, declarations(4, 500, false)); err != nil {
		t.Fatalf("4 tools in %d bytes: %v", len(declarations(4, 500, false)), err)
	}
}

// The limits are checked before the declarations are decoded or their schemas compiled: tools
// over a limit whose schema would fail to compile are refused for the limit, not the schema.
func TestToolLimitsBeforeCompiling(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, &hub.Options{MaxTools: 4, MaxSchemaBytes: 4000})
	d := hubtest.Connect(t, url, nil)
	if details := refusal(t, d, params(macA, declarations(2, 10, true))); !strings.Contains(details, "tools[1]") {
		t.Fatalf("a bad schema within the limits: %q, want the schema's problem", details)
	}
	if details := refusal(t, d, params(macA, declarations(5, 10, true))); !strings.Contains(details, "agent.limits.tools_per_device") {
		t.Errorf("5 tools, one bad: %q, want the count refused first", details)
	}
	if details := refusal(t, d, params(macA, declarationsOf(4100, true))); !strings.Contains(details, "agent.limits.schema_bytes") {
		t.Errorf("too many bytes, one bad schema: %q, want the size refused first", details)
	}
}

// The defaults hold without any option: 128 tools, 256 KiB. A device declaring most of a MiB of
// schemas (what cost 45 MB and seconds of CPU when compiled) is refused for a few MB at most, the
// frame itself and its copies.
func TestToolLimitsDefaults(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, nil)
	d := hubtest.Connect(t, url, nil)
	if details := refusal(t, d, params(macA, declarations(129, 10, false))); !strings.Contains(details, "129 tools declared: at most 128") {
		t.Errorf("129 tools: %q", details)
	}
	const n = 120
	tools := declarations(n, 7000, false) // about 850 KB, under the transport's 1 MiB frames
	if len(tools) < 800<<10 || len(tools) > 1000<<10 {
		t.Fatalf("the declarations are %d bytes; the test wants most of a MiB", len(tools))
	}
	p := params(macA, tools)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	details := refusal(t, d, p)
	runtime.ReadMemStats(&after)
	if !strings.Contains(details, "at most 262144") {
		t.Errorf("%d bytes: %q, want the default limit", len(p), details)
	}
	// Sending, reading and parsing the frame on both sides copies it a few times; compiling the
	// schemas would cost tens of MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("refusing %d bytes of tools allocated %d MB, want a few", len(p), alloc>>20)
	}
}
