//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/natstest"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/seedtask"
	"github.com/devicectl/devicectl/internal/testing/streamllm"
)

// clusterConfig is testConfig for node name of a cluster on nats.
func clusterConfig(t *testing.T, nats, name string) *config.Config {
	c := testConfig(t)
	c.Agent.Cluster.NATS = nats
	c.Agent.Cluster.Node = name
	c.Agent.Cluster.TTL = config.MinClusterTTL
	return c
}

// seedSend posts seed 004's tasks/send to the server at addr and returns the task's state and
// reply.
func seedSend(t *testing.T, addr, id, mac, text string) (state, reply string) {
	t.Helper()
	task, err := seedtask.Send(waitCtx(t), nil, "http://"+addr, seedtask.Request{ID: id, Text: text, Metadata: map[string]string{"mac": mac}})
	if err != nil {
		t.Fatalf("%s: %v", addr, err)
	}
	return task.Status.State, task.Reply()
}

// Two serve nodes on one NATS: a seed task sent to the first reaches a device on the second, whose
// reply streams to the device; the first node's agent card lists that device's tools.
func TestClusterTaskReachesAnotherNodesDevice(t *testing.T) {
	nats := natstest.Start(t)
	one, addr1 := startServer(t, clusterConfig(t, nats.URL(), "one"))
	_, addr2 := startServer(t, clusterConfig(t, nats.URL(), "two"))
	const mac = "02-CC-00-00-01-01"
	// An MCP session on node one, opened before the device registers on node two.
	changed := make(chan struct{}, 64)
	mc := mcp.NewClient(&mcp.Implementation{Name: "devicectl-test", Version: "test"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := mc.Connect(waitCtx(t), &mcp.StreamableClientTransport{Endpoint: "http://" + addr1 + MCPPath, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	d := startDevice(t, "ws://"+addr2+"/", mac, "")
	d.waitRegistered(t)

	events, stop := one.Hub.Subscribe(0)
	defer stop()
	for dev, ok := one.Hub.Device(mac); !ok || dev.Node != "two"; dev, ok = one.Hub.Device(mac) {
		select {
		case <-events:
		case <-time.After(10 * time.Second):
			t.Fatalf("node one does not list %s on node two", mac)
		}
	}
	if state, reply := seedSend(t, addr1, "task-volume", mac, "把音量调到30"); state != "completed" {
		t.Fatalf("the task on node one: %s, %q", state, reply)
	}
	// The control call was answered "success" at once; its CallDone, which node two publishes
	// once the device answered, says it ran.
	for done := false; !done; {
		select {
		case e := <-events:
			if e.Kind == hub.CallDone && e.Tool == "amplify_volume" {
				if e.Err != nil || e.Device.Node != "two" {
					t.Fatalf("the call on node two: %+v", e)
				}
				done = true
			}
		case <-time.After(10 * time.Second):
			t.Fatal("node one saw no amplify_volume call done on node two")
		}
	}
	if v, err := d.speaker.Volume(waitCtx(t)); err != nil || v != 30 {
		t.Errorf("the device's volume is %d (%v); want 30", v, err)
	}
	select {
	case r := <-d.replies:
		if r == "" {
			t.Error("the device was sent an empty final")
		}
	case <-time.After(10 * time.Second):
		t.Error("the reply's final did not reach the device on node two")
	}
	state, reply := seedSend(t, addr1, "task-status", mac, "你现在状态怎么样")
	if state != "completed" || !strings.Contains(reply, "30") {
		t.Errorf("a query through node one: %s, %q; want the device's status, volume 30", state, reply)
	}

	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("node one's MCP session was not told its tools changed when the device registered on node two")
	}
	tool := mac + "__get_device_status"
	found := false
	for tl, err := range cs.Tools(waitCtx(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || tl.Name == tool
	}
	if !found {
		t.Fatalf("node one's MCP server does not list %s", tool)
	}
	res, err := cs.CallTool(waitCtx(t), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("calling %s through node one's MCP server: %+v, %v", tool, res, err)
	}

	resp, err := http.Get("http://" + addr1 + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	card, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(card), `"amplify_volume"`) {
		t.Errorf("node one's agent card does not list the device's tools: %s", card)
	}
}

// Two nodes of a cluster on one database (SQLite or PostgreSQL): a task streaming on node one
// keeps running when node two starts, and node two marks it failed once node one is gone from
// the cluster (its NATS side closed: to the others it is dead).
func TestClusterGoneNodesTasksFail(t *testing.T) {
	storetest.Each(t, clusterGoneNodesTasksFail)
}

func clusterGoneNodesTasksFail(t *testing.T, where string) {
	nats := natstest.Start(t)
	llm := streamllm.Start(t, 0, 20*time.Millisecond) // each turn streams until it is ended
	nodeConfig := func(name string) *config.Config {
		c := clusterConfig(t, nats.URL(), name)
		if store.IsPostgres(where) {
			c.Agent.Store = where
		} else {
			c.Agent.StateDir = filepath.Dir(where)
		}
		c.Agent.Planner = config.PlannerLLM
		c.LLM.BaseURL, c.LLM.Model = llm, "m"
		return c
	}
	one, addr1 := startServer(t, nodeConfig("one"))

	// A seed task streaming on node one, working once its first event is out.
	_, stream, err := seedtask.Stream(t.Context(), nil, "http://"+addr1, seedtask.Request{ID: "long", Text: "sing"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	taskState := func(addr string) (state, why string) {
		t.Helper()
		task, err := seedtask.Get(t.Context(), nil, "http://"+addr, "long")
		if err != nil {
			t.Fatal(err)
		}
		return task.Status.State, task.Why()
	}
	if state, _ := taskState(addr1); state != "working" {
		t.Fatalf("the streaming task on node one is %s", state)
	}

	_, addr2 := startServer(t, nodeConfig("two"))
	if state, why := taskState(addr2); state != "working" {
		t.Errorf("node two's start made node one's running task %s (%q); want it still working", state, why)
	}

	one.Cluster.Close()
	poll.Until(t, "node one's task failed on node two", func() bool {
		state, _ := taskState(addr2)
		return state == "failed"
	})
	if _, why := taskState(addr2); !strings.Contains(why, "node one ") {
		t.Errorf("node one's task failed with %q; want the reason naming node one", why)
	}
}
