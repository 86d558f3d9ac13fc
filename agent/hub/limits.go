package hub

import "fmt"

// Defaults of Options.MaxTools and Options.MaxSchemaBytes, the same as the config's
// (agent.limits.tools_per_device, agent.limits.schema_bytes).
const (
	DefaultMaxTools       = 128
	DefaultMaxSchemaBytes = 256 << 10
)

// paramsOverhead is what a registration's params hold besides the tools: the braces, the member
// names and the MAC. A params object longer than MaxSchemaBytes plus this is refused before it
// is parsed at all.
const paramsOverhead = 256

// checkParamsSize refuses params too long to hold tools within the byte limit; it reads nothing
// but the length, so an oversized registration costs nothing but the frame already read.
func (h *Hub) checkParamsSize(n int) string {
	max := h.opts.MaxSchemaBytes
	if max < 0 || int64(n) <= max+paramsOverhead {
		return ""
	}
	return fmt.Sprintf("the registration is %d bytes: tool declarations may be at most %d bytes (agent.limits.schema_bytes)", n, max)
}

// checkTools refuses tool declarations over the byte or the count limit, before they are decoded
// or their schemas compiled (what costs memory and time: tens of MB and seconds for a MiB of
// schemas). raw is params.tools, already known to be valid JSON.
func (h *Hub) checkTools(raw []byte) string {
	if max := h.opts.MaxSchemaBytes; max >= 0 && int64(len(raw)) > max {
		return fmt.Sprintf("the tool declarations are %d bytes: at most %d are allowed (agent.limits.schema_bytes)", len(raw), max)
	}
	if max := h.opts.MaxTools; max >= 0 {
		if n := countElements(raw); n > max {
			return fmt.Sprintf("%d tools declared: at most %d are allowed per device (agent.limits.tools_per_device)", n, max)
		}
	}
	return ""
}

// countElements counts the elements of raw when it is a JSON array (0 otherwise), by scanning
// its bytes: no decoding, no allocation. raw must be valid JSON.
func countElements(raw []byte) int {
	i := 0
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	if i == len(raw) || raw[i] != '[' {
		return 0
	}
	depth, n, inString, empty := 0, 0, false, true
	for ; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
		if depth >= 1 && !isSpace(c) && !(depth == 1 && c == '[') {
			empty = false
		}
	}
	if empty {
		return 0
	}
	return n + 1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
