package clustere2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/natstest"
	"github.com/devicectl/devicectl/internal/testing/pgtest"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/seedtask"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/internal/testing/streamllm"
)

const (
	nodes       = 3
	perSwarm    = 100 // devices per swarm; a swarm a node, 300 in all
	failoverMax = 5 * time.Second
	// callers send tasks to node 1 while node 2 is killed.
	callers = 6
	// longTasks stream on node 2 when it is killed: the other nodes must mark them failed.
	longTasks = 4
	// ttl is agent.cluster.ttl: a dead node's tasks are failed within about twice it.
	ttl = 5 * time.Second
)

var bin string // devicectl, built for this machine

// TestMain stops the PostgreSQL server the test started and removes the binary it built.
func TestMain(m *testing.M) {
	code := pgtest.Main(m, leakcheck.Main)
	serveproc.Remove()
	os.Exit(code)
}

// node is one serve process.
type node struct {
	name string
	proc *os.Process
	ws   string // the devices' ws:// URL
	http string // http://ADDR
	log  logbuf.Buffer
}

// swarm is one swarm process and what its status lines say.
type swarm struct {
	index int // its MACs are 02-DC-0index-00-00-NN
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []statusLine
	seen  chan struct{} // a token per status line
	done  chan struct{} // closed when its output ends
}

type statusLine struct {
	at         time.Time
	registered int
}

func swarmMAC(index, i int) string { return fmt.Sprintf("02-DC-%02X-00-00-%02X", index, i) }

// sharedStore is the agent section's database, which the three processes share: a PostgreSQL
// schema of the test's own (pgtest), as a deployment's nodes share one database server.
func sharedStore(t *testing.T) string {
	return "  store: '" + pgtest.DSN(t) + "'\n  state_dir: " + t.TempDir() + "\n"
}

// startNodes starts the three serve nodes; node 2's turns are its model's (llm: an endpoint that
// streams until the turn ends), the others' the rules planner's.
func startNodes(t *testing.T, natsURL, llm string) []*node {
	t.Helper()
	store := sharedStore(t)
	var ns []*node
	for i := 1; i <= nodes; i++ {
		n := &node{name: fmt.Sprintf("node-%d", i)}
		text := "agent:\n" + store + "  cluster:\n    nats: " + natsURL + "\n    node: " + n.name + "\n    ttl: " + ttl.String() + "\n"
		if i == 2 {
			text += "  planner: llm\nllm:\n  base_url: " + llm + "\n  model: m\n"
		}
		cfg := standin.WriteFile(t, "serve.yaml", text)
		n.proc, n.ws = serveproc.StartLogging(t, bin, &n.log, "--config", cfg, "--log-level", "info")
		n.http = "http://" + strings.TrimSuffix(strings.TrimPrefix(n.ws, "ws://"), "/")
		ns = append(ns, n)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range ns {
				t.Logf("%s's log:\n%s", n.name, n.log.String())
			}
		}
	})
	return ns
}

// servers lists the nodes' URLs starting at first, the order a device tries them in.
func servers(ns []*node, first int) string {
	var urls []string
	for i := range ns {
		urls = append(urls, ns[(first+i)%len(ns)].ws)
	}
	return strings.Join(urls, ",")
}

var statusRE = regexp.MustCompile(`registered (\d+)/(\d+)`)

func startSwarm(t *testing.T, index int, urls string) *swarm {
	t.Helper()
	s := &swarm{index: index, seen: make(chan struct{}, 4096), done: make(chan struct{})}
	s.cmd = exec.Command(bin, "swarm", "-n", strconv.Itoa(perSwarm), "--mac-prefix", fmt.Sprintf("02-DC-%02X", index),
		"--servers", urls, "--interval", "100ms", "--ramp", "500ms")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr logbuf.Buffer
	s.cmd.Stderr = &stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			m := statusRE.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			s.mu.Lock()
			s.lines = append(s.lines, statusLine{time.Now(), n})
			s.mu.Unlock()
			select {
			case s.seen <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("swarm %d: %v\n%s", index, err, stderr.String())
		}
	})
	return s
}

// waitLine waits for a status line at or after since for which ok holds, and returns it.
func (s *swarm) waitLine(t *testing.T, since time.Time, within time.Duration, what string, ok func(statusLine) bool) statusLine {
	t.Helper()
	timeout := time.After(within)
	next := 0
	for {
		s.mu.Lock()
		lines := s.lines[next:]
		next = len(s.lines)
		s.mu.Unlock()
		for _, l := range lines {
			if !l.at.Before(since) && ok(l) {
				return l
			}
		}
		select {
		case <-s.seen:
		case <-s.done:
			t.Fatalf("swarm %d ended while waiting for %s", s.index, what)
		case <-timeout:
			t.Fatalf("swarm %d: no %s within %s", s.index, what, within)
		}
	}
}

var client = &http.Client{Timeout: 90 * time.Second}

// send posts tasks/send to n and returns the task, or the JSON-RPC error.
func send(ctx context.Context, n *node, id, mac, userID, text string) (seedtask.Task, error) {
	meta := map[string]string{"mac": mac}
	if userID != "" {
		meta["user_id"] = userID
	}
	return seedtask.Send(ctx, client, n.http, seedtask.Request{ID: id, Text: text, Metadata: meta})
}

func mustSend(t *testing.T, n *node, id, mac, userID, text string) seedtask.Task {
	t.Helper()
	task, err := send(t.Context(), n, id, mac, userID, text)
	if err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
	if task.Status.State != "completed" {
		t.Fatalf("%s: task %s (%q to %s) is %s: %q", n.name, id, text, mac, task.Status.State, task.Reply())
	}
	return task
}

func get(t *testing.T, n *node, id string) seedtask.Task {
	t.Helper()
	task, err := seedtask.Get(t.Context(), client, n.http, id)
	if err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
	return task
}

var registeredRE = regexp.MustCompile(`msg=registered [^\n]*server=(\S+)`)

// lastRegistration is the server the run device's log says it registered with last.
func lastRegistration(log string) string {
	m := registeredRE.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// longTask is a seed task streaming on a node until the node dies.
type longTask struct {
	id   string
	done chan struct{} // closed when its stream ends
}

// startLong sends a seed tasks/send/stream to n and returns once its first event is out (the
// task is working); its stream is read to its end in the background.
func startLong(t *testing.T, n *node, id, mac string) *longTask {
	t.Helper()
	// No timeout: the stream lasts until the node dies.
	first, stream, err := seedtask.Stream(t.Context(), nil, n.http, seedtask.Request{ID: id, Text: "sing", Metadata: map[string]string{"mac": mac}})
	if err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
	if !strings.Contains(first, `"working"`) {
		stream.Close()
		t.Fatalf("%s: the first event of %s: %s", n.name, id, first)
	}
	l := &longTask{id: id, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer stream.Close()
		io.Copy(io.Discard, stream)
	}()
	return l
}

// wait waits for the task's stream to end with its node.
func (l *longTask) wait(t *testing.T) {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the stream of %s is still open after its node was killed", l.id)
	}
}

// answer is one task of the load and what it was answered.
type answer struct {
	id, mac string
	swarm   int
	sent    time.Time
	task    seedtask.Task
	err     error
}

func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three servers and 301 devices")
	}
	bin = serveproc.Build(t)
	nats := natstest.Start(t)
	ns := startNodes(t, nats.URL(), streamllm.Start(t, 0, 50*time.Millisecond))
	one, two, three := ns[0], ns[1], ns[2]

	// Swarm i's devices try node i first, then the next ones.
	var swarms []*swarm
	for i := range nodes {
		swarms = append(swarms, startSwarm(t, i+1, servers(ns, i)))
	}
	for _, s := range swarms {
		s.waitLine(t, time.Time{}, 60*time.Second, "line with every device registered", func(l statusLine) bool { return l.registered == perSwarm })
	}

	// A device that prints what it is told, on node 2 first: the reminder's.
	const speaker = "02-DD-00-00-00-01"
	devCfg := standin.WriteFile(t, "run.yaml", "server:\n  urls: ['"+strings.ReplaceAll(servers(ns, 1), ",", "', '")+"']\ndevice:\n  mac: "+speaker+"\n  state_dir: "+t.TempDir()+
		"\nhardware:\n  mode: sim\nlog:\n  level: info\n")
	dev := serveproc.Run(t, bin, devCfg)
	dev.Err.WaitFor(t, "registration of the run device on node 2", func(s string) bool { return lastRegistration(s) == two.ws })

	// Tasks sent to node 1 reach devices on nodes 2 and 3: seed 004's route and A2A 1.0.
	for _, mac := range []string{swarmMAC(2, 7), swarmMAC(3, 9)} {
		mustSend(t, one, "reach-volume-"+mac, mac, "", "把音量调到37")
		if task := mustSend(t, one, "reach-status-"+mac, mac, "", "你现在状态怎么样"); !strings.Contains(task.Reply(), "37") {
			t.Errorf("the status of %s through node 1: %q; want volume 37", mac, task.Reply())
		}
	}
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), one.http)
	if err != nil {
		t.Fatalf("node 1's agent card: %v", err)
	}
	a2aClient, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer a2aClient.Destroy()
	for _, mac := range []string{swarmMAC(2, 11), swarmMAC(3, 12)} {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("你现在状态怎么样"))
		msg.Metadata = map[string]any{"mac": mac}
		res, err := a2aClient.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: msg})
		if task, ok := res.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("A2A SendMessage through node 1 to %s: %#v, %v", mac, res, err)
		}
	}

	// A memory kept through node 1, and a reminder for the device on node 2, due after the kill.
	mustSend(t, one, "memory-set", swarmMAC(1, 1), "user-e2e", "记住我喜欢科技")
	mustSend(t, one, "reminder-set", speaker, "user-e2e", "20秒后提醒我喝水")
	reminderDue := time.Now().Add(20 * time.Second)

	// Tasks flow to node 1 for devices of every node; node 2 is killed meanwhile.
	ctx, stopLoad := context.WithCancel(t.Context())
	var (
		mu      sync.Mutex
		answers []answer
		load    sync.WaitGroup
	)
	for c := range callers {
		load.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				sw := (c+i)%nodes + 1
				a := answer{id: fmt.Sprintf("load-%d-%d", c, i), mac: swarmMAC(sw, (c*7+i)%perSwarm), swarm: sw, sent: time.Now()}
				a.task, a.err = send(context.Background(), one, a.id, a.mac, "", "你现在状态怎么样")
				mu.Lock()
				answers = append(answers, a)
				mu.Unlock()
			}
		})
	}
	// Tasks streaming on node 2 until it dies.
	var long []*longTask
	for i := range longTasks {
		long = append(long, startLong(t, two, fmt.Sprintf("long-%d", i), swarmMAC(2, 50+i)))
	}
	swarms[1].waitLine(t, time.Now().Add(time.Second), 10*time.Second, "line a second into the load", func(statusLine) bool { return true })
	killed := time.Now()
	if err := two.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	swarms[1].waitLine(t, killed, 5*time.Second, "line with node 2's devices gone", func(l statusLine) bool { return l.registered < perSwarm })
	back := swarms[1].waitLine(t, killed, 30*time.Second, "line with node 2's devices back", func(l statusLine) bool { return l.registered == perSwarm })
	failover := back.at.Sub(killed)
	t.Logf("node 2's %d devices were registered on nodes 1 and 3 %s after its SIGKILL", perSwarm, failover.Round(10*time.Millisecond))
	if failover > failoverMax {
		t.Errorf("node 2's devices took %s to register elsewhere; want under %s", failover, failoverMax)
	}
	dev.Err.WaitFor(t, "the run device registered on node 3", func(s string) bool { return lastRegistration(s) == three.ws })
	// Tasks after the devices are back, then the load stops.
	swarms[1].waitLine(t, time.Now().Add(2*time.Second), 10*time.Second, "line two seconds after", func(statusLine) bool { return true })
	stopLoad()
	load.Wait()

	// Every task has one answer, the same on every node left; only those for node 2's devices
	// sent before they were back may have failed, and then because the device was gone.
	var completed, failed int
	for _, a := range answers {
		if a.err != nil {
			t.Errorf("task %s to %s: %v", a.id, a.mac, a.err)
			continue
		}
		switch a.task.Status.State {
		case "completed":
			completed++
		case "failed":
			failed++
			if a.swarm != 2 || a.sent.After(back.at) || !strings.Contains(a.task.Why(), "device") {
				t.Errorf("task %s to %s (swarm %d, sent %s after the kill) failed: %q", a.id, a.mac, a.swarm, a.sent.Sub(killed).Round(time.Millisecond), a.task.Why())
			} else if failed == 1 {
				t.Logf("a task that failed: %q", a.task.Why())
			}
		default:
			t.Errorf("task %s ended %s", a.id, a.task.Status.State)
		}
		for _, n := range []*node{one, three} {
			if got := get(t, n, a.id); got.Status.State != a.task.Status.State || got.Reply() != a.task.Reply() {
				t.Errorf("%s reads task %s as %s %q; it was answered %s %q", n.name, a.id, got.Status.State, got.Reply(), a.task.Status.State, a.task.Reply())
			}
		}
	}
	t.Logf("%d tasks during the kill: %d completed, %d failed (node 2's devices, before they were back)", len(answers), completed, failed)
	if completed == 0 {
		t.Error("no task completed during the kill")
	}

	// The tasks that were streaming on node 2 end failed, as the nodes left see them, once they
	// find node 2 gone: within its presence's TTL and a TTL more for it to come back.
	for _, l := range long {
		l.wait(t)
		var task seedtask.Task
		poll.Until(t, "task "+l.id+" of the killed node failed", func() bool {
			task = get(t, one, l.id)
			return task.Status.State != "working"
		})
		if task.Status.State != "failed" || !strings.Contains(task.Why(), "node-2") {
			t.Errorf("task %s, working on node 2 when it was killed, is %s %q; want failed naming node-2", l.id, task.Status.State, task.Why())
		}
		if got := get(t, three, l.id); got.Status.State != task.Status.State || got.Why() != task.Why() {
			t.Errorf("node 3 reads task %s as %s %q; node 1 as %s %q", l.id, got.Status.State, got.Why(), task.Status.State, task.Why())
		}
	}
	// When the server failed them, not when this test got round to reading them: under an
	// emulator the checks above take seconds. The timestamp has whole seconds, so a second more
	// bounds the moment from above.
	var failedAt time.Time
	for _, l := range long {
		stamp := get(t, one, l.id).Status.Timestamp
		ts, err := time.Parse(time.RFC3339, stamp)
		if err != nil {
			t.Fatalf("task %s's status timestamp %q: %v", l.id, stamp, err)
		}
		if ts.After(failedAt) {
			failedAt = ts
		}
	}
	failedAfter := failedAt.Add(time.Second).Sub(killed)
	t.Logf("the %d tasks streaming on node 2 were failed within %s of its SIGKILL (agent.cluster.ttl %s); read %s after it",
		longTasks, failedAfter.Round(100*time.Millisecond), ttl, time.Since(killed).Round(100*time.Millisecond))
	if failedAfter > 3*ttl {
		t.Errorf("node 2's tasks were failed up to %s after it died; want within %s", failedAfter, 3*ttl)
	}

	// The memory reads the same from node 3.
	if task := mustSend(t, three, "memory-get", swarmMAC(3, 2), "user-e2e", "我喜欢什么"); !strings.Contains(task.Reply(), "科技") {
		t.Errorf("node 3 recalls %q; want 科技, kept through node 1", task.Reply())
	}

	// The reminder is said once, on node 3, where its device is now. A second one set through
	// node 3 after it is said shows nothing more of the first came meanwhile.
	dev.Out.WaitWithin(t, "the reminder on the run device", time.Until(reminderDue)+15*time.Second, func(s string) bool {
		return strings.Contains(s, "提醒：喝水")
	})
	mustSend(t, three, "reminder-later", speaker, "user-e2e", "3秒后提醒我吃药")
	dev.Out.WaitWithin(t, "the second reminder", 20*time.Second, func(s string) bool { return strings.Contains(s, "提醒：吃药") })
	if n := strings.Count(dev.Out.String(), "提醒：喝水"); n != 1 {
		t.Errorf("the reminder was said %d times; want once:\n%s", n, dev.Out.String())
	}
}
