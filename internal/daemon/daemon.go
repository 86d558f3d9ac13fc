package daemon

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/turn"
	"github.com/devicectl/devicectl/hooks"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/internal/safefile"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Options is what the daemon gets from its process besides the configuration.
type Options struct {
	Stdout io.Writer           // the AI's replies; nil: discarded
	Stderr io.Writer           // the log, errors and thoughts; nil: discarded
	Getenv func(string) string // the environment; nil: os.Getenv
	// Load reads the configuration again as at start-up (file, then flags); Reload makes the
	// daemon call it. Nil: Reload does nothing.
	Load func() (*config.Config, error)
	// Reloaded, when set, is told the outcome of each reload once it is over: nil when the new
	// configuration is in force (or nothing changed), else why it was refused.
	Reloaded func(err error)
	Version  string // reported in the User-Agent, get_device_status and OpenTool
}

// Daemon is `devicectl run`: the agent and the parts it is built from. A reload builds the parts
// of the new configuration beside the old ones and puts them in force only when all of them are
// good, so a bad new configuration changes nothing.
type Daemon struct {
	cfg      *config.Config // at start-up
	opts     Options
	reloads  chan struct{}     // Reload's requests; capacity 1, so requests made during one coalesce
	ran      atomic.Bool       // Run has been called
	envToken string            // DEVICECTL_TOKEN as the process started; removed from the environment since
	redact   *logging.Redactor // stderr: the log, errors, thoughts
	out      *logging.Redactor // stdout: the replies
	logs     *logging.Switch
	repeats  *logging.Repeats // in front of every logger: a flood of one message becomes a count
	log      *slog.Logger
	state    *connState
	replyMu  sync.Mutex     // the agent may render from more than one goroutine over a restart
	reply    turn.Assembler // the reply in progress, for the final_reply hook
	sd       *sdNotifier
	agent    *device.Agent

	cur atomic.Pointer[parts] // in force; read by the agent's callbacks on any goroutine
	ot  *openToolServer       // nil: opentool.listen is off

	wg sync.WaitGroup // hook runners being closed after a reload
}

// New returns a daemon for c; Run starts it. opts may be nil.
func New(c *config.Config, opts *Options) *Daemon {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return &Daemon{cfg: c, opts: o, reloads: make(chan struct{}, 1), state: newConnState(), reply: turn.Assembler{Gather: maxReply}}
}

// Reload asks the running daemon to read its configuration again (Options.Load) and put it in
// force; it does not wait. Requests made while one is being handled are served by one more.
func (d *Daemon) Reload() {
	select {
	case d.reloads <- struct{}{}:
	default:
	}
}

// parts are what one configuration builds. They are replaced as a whole by a reload.
type parts struct {
	cfg      *config.Config
	ident    identity
	hw       *hardware.Hardware
	reg      *tools.Registry
	renderer *device.Renderer
	hooks    *hooks.Runner
	toolsets *toolSets
	keys     [sha256.Size]byte // of the OpenTool and tool set key files: renewed in place, they count as a change
}

// keyFiles lists the files of API keys and tokens c names, besides the server's credentials.
func keyFiles(c *config.Config) []string {
	files := []string{c.OpenTool.APIKeysFile, c.OpenTool.CertFile, c.OpenTool.KeyFile}
	for _, s := range c.ToolSets.OpenTool {
		files = append(files, s.APIKeyFile)
	}
	for _, s := range c.ToolSets.OpenAPI {
		files = append(files, s.BearerTokenFile, s.APIKeyFile)
	}
	return files
}

// keySums hashes the key files of c; one that cannot be read is reported where it is used.
func keySums(c *config.Config) [sha256.Size]byte {
	var files []keyedFile
	for _, name := range keyFiles(c) {
		files = append(files, keyedFile{path: name})
	}
	sum, _ := fileSums(files...)
	return sum
}

// identity is who the device is to the server, and how it proves it.
type identity struct {
	mac, clientID, token string
	tls                  *tls.Config
	tlsFiles             [sha256.Size]byte // of the CA, certificate and key files: renewed in place, they still count as a change
}

// same reports whether the server would see no difference between id and o.
func (id identity) same(o identity) bool {
	return id.mac == o.mac && id.clientID == o.clientID && id.token == o.token && id.tlsFiles == o.tlsFiles
}

// keyedFile is a file the config key names.
type keyedFile struct{ key, path string }

// fileSums hashes the contents of the files (those with no path skipped), in order. Each must
// be a regular file of at most config.MaxFileSize bytes; the error names the key of the first
// that is not.
func fileSums(files ...keyedFile) ([sha256.Size]byte, error) {
	h := sha256.New()
	for _, f := range files {
		if f.path == "" {
			continue
		}
		b, err := safefile.ReadFile(f.path, config.MaxFileSize)
		if err != nil {
			return [sha256.Size]byte{}, &config.Error{Key: f.key, Err: err}
		}
		fmt.Fprintf(h, "%s:%d:", f.path, len(b))
		h.Write(b)
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}

// ErrRan is returned by a second call of Run: a Daemon runs once.
var ErrRan = errors.New("daemon: Run has already been called")

// Run runs the agent until ctx is cancelled (a signal), then returns nil; an error means it
// could not start (a *config.Error, a *hardware.PartError, ...) or the agent failed. The programs
// it starts (parts, speech, hooks) inherit the process's environment, from which it removes
// DEVICECTL_TOKEN: the token is the server's business, not theirs.
func (d *Daemon) Run(ctx context.Context) (err error) {
	if d.ran.Swap(true) {
		return ErrRan
	}
	c, dio := d.cfg, &d.opts
	d.envToken = dio.Getenv(config.TokenEnv)
	// Stream redactors: replies and thoughts arrive in chunks, and a server that echoes the token
	// may split it across them.
	d.redact = logging.NewStreamRedactor(dio.Stderr)
	d.out = logging.NewStreamRedactor(dio.Stdout)
	defer d.redact.Flush()
	defer d.out.Flush()
	d.logs = logging.NewSwitch(logHandler(c.Log, d.redact, dio.Stderr))
	// One warning per dropped hook event or refused request would flood the journal, which then
	// drops lines whatever they say. Closed before the redactors flush: its last summaries go too.
	d.repeats = logging.NewRepeats(nil)
	defer d.repeats.Close()
	d.log = slog.New(d.repeats.Handler(d.logs))
	// Whatever goes wrong, the message printed on the way out must not carry a secret either.
	defer func() {
		if err != nil {
			err = &scrubbedError{err: err, text: d.redact.Scrub(err.Error())}
		}
	}()
	if len(c.Server.Servers()) == 0 {
		return &config.Error{Key: "server.url", Err: errors.New("not set; set it (or server.urls, for several) in the config file or with --server (--servers)")}
	}
	ident, err := d.identity(c, d.log)
	if err != nil {
		return err
	}
	// The programs devicectl starts (a face, a speech command, amixer, hooks) inherit its
	// environment; the token is the server's business, not theirs.
	os.Unsetenv(config.TokenEnv)
	hk, err := newHookRunner(c, ident.mac, d.log)
	if err != nil {
		return err
	}
	hw, err := hardware.Open(ctx, c, d.log)
	if err != nil {
		hk.Close(context.Background())
		return err
	}
	p := &parts{cfg: c, ident: ident, hw: hw, hooks: hk, renderer: d.newRenderer(c), keys: keySums(c)}
	d.cur.Store(p) // before the agent starts: nothing reads it yet, and the clean-up below needs it
	defer func() {
		p := d.cur.Load()
		p.toolsets.Close()
		// The last events (disconnected) get their hooks run, within a hook's time.
		closeHooks(p.hooks, p.cfg.Hooks.Timeout)
		d.wg.Wait()
		if herr := p.hw.Halt(); herr != nil {
			err = errors.Join(err, herr)
		}
	}()
	if p.toolsets, err = d.startToolSets(ctx, c, nil); err != nil {
		return err
	}
	if p.reg, err = d.registry(hw, c, p.toolsets); err != nil {
		return err
	}

	d.agent, err = device.New(d.agentOptions(p))
	if err != nil {
		return fmt.Errorf("starting the agent: %w", err)
	}
	d.log.Info("starting", "version", d.opts.Version, "server", serverNames(c.Server), "mac", ident.mac,
		"hardware", hw.String(), "tools", hardware.ToolNames(p.reg), "token", ident.token != "")
	// After the agent has stopped: a call still running there is answered "shutting down". A
	// reload may have started the server, or moved it.
	defer func() { d.ot.close(d.cur.Load().cfg.Execution.DrainTimeout) }()
	if c.OpenTool.Listen != "" {
		ot, err := d.reopenOpenTool(c)
		if err != nil {
			return err
		}
		ot.commit()
	}
	ctl, err := d.startControl(c)
	if err != nil {
		return err
	}
	defer func() { closeControl(ctl, d.cur.Load().cfg.Execution.DrainTimeout) }()
	sdCtx, stopSystemd := context.WithCancel(ctx)
	d.sd = startSystemd(sdCtx, serverNames(c.Server), d.agent.Check, d.log)
	defer func() {
		stopSystemd()
		d.sd.wait()
	}()

	hear, err := d.startHearing(ctx, c)
	if err != nil {
		return err
	}
	defer hear.stop()

	ran := make(chan error, 1)
	go func() { ran <- d.agent.Run(ctx) }()
	for {
		select {
		case err := <-ran:
			if err != nil {
				return err
			}
			d.log.Info("stopped")
			return nil
		case <-d.reloads:
			if dio.Load != nil {
				d.reload(ctx)
			}
		case <-d.cur.Load().toolsets.Changed():
			d.refreshTools()
		}
	}
}

// identity works out the MAC, Client-Id, token and TLS settings of c.
func (d *Daemon) identity(c *config.Config, log *slog.Logger) (identity, error) {
	var id identity
	var err error
	if id.mac, err = config.DeviceMAC(c.Device); err != nil {
		return id, err
	}
	getenv := func(k string) string {
		if k == config.TokenEnv {
			return d.envToken
		}
		return d.opts.Getenv(k)
	}
	if id.token, err = config.LoadToken(c.Server, getenv, log); err != nil {
		return id, err
	}
	d.redact.Add(id.token)
	d.out.Add(id.token)
	// Hashed first: that refuses a FIFO or a device before TLSConfig reads the files whole.
	if id.tlsFiles, err = fileSums(keyedFile{"server.ca_file", c.Server.CAFile},
		keyedFile{"server.cert_file", c.Server.CertFile}, keyedFile{"server.key_file", c.Server.KeyFile}); err != nil {
		return id, err
	}
	if id.tls, err = config.TLSConfig(c.Server, log); err != nil {
		return id, err
	}
	if id.clientID, err = config.ClientID(c.Device, d.opts.Getenv, log); err != nil {
		return id, err
	}
	return id, nil
}

func (d *Daemon) newRenderer(c *config.Config) *device.Renderer {
	// Through the redactors too: a server that echoes the token has it shown nowhere.
	return device.NewRenderer(d.out, d.redact, &device.RenderOptions{
		ShowThoughts: c.Render.ShowThoughts,
		Color:        c.Render.ColorOn(d.opts.Stderr),
		Logger:       d.log,
	})
}

// agentOptions are the agent's options for p. The callbacks read the parts in force when they
// run, so a reload that keeps the line changes what they do without a new agent.
func (d *Daemon) agentOptions(p *parts) *device.Options {
	return p.cfg.AgentOptions(config.AgentSettings{
		Version:    d.opts.Version,
		MAC:        p.ident.mac,
		ClientID:   p.ident.clientID,
		Token:      p.ident.token,
		TLS:        p.ident.tls,
		Registry:   p.reg,
		Render:     d.render,
		Logger:     d.log,
		OnState:    d.onState,
		OnLineLost: d.onLineLost,
		OnCall:     d.onCall,
	})
}

// render shows an AI message, hands it to speech (which only queues, so a reply is never held
// up by the voice reading the one before) and, at the end of a reply, to the final_reply hook.
func (d *Daemon) render(m protocol.AIMessage) {
	p := d.cur.Load()
	p.renderer.Render(m)
	if p.hw.Speech != nil {
		p.hw.Speech.Observe(m)
	}
	if !p.hooks.Has(hooks.FinalReply) {
		return
	}
	d.replyMu.Lock()
	st := d.reply.Add(m.Type, m.Content)
	d.replyMu.Unlock()
	if st.End {
		p.hooks.Fire(hooks.FinalReply, map[string]string{"REPLY": d.redact.Scrub(st.Reply)})
	}
}

func (d *Daemon) onState(st device.State) {
	d.state.set(st)
	d.sd.state(st)
	p := d.cur.Load()
	switch st {
	case device.Registering: // dialled: the line is up
		p.hooks.Fire(hooks.Connected, nil)
	case device.Registered:
		p.hooks.Fire(hooks.Registered, map[string]string{"TOOLS": hardware.ToolNames(p.reg)})
	}
}

func (d *Daemon) onLineLost(err error) {
	reason := "closed by the device"
	if err != nil {
		reason = err.Error()
	}
	d.cur.Load().hooks.Fire(hooks.Disconnected, map[string]string{"REASON": d.redact.Scrub(reason)})
}

func (d *Daemon) onCall(r device.CallReport) {
	p := d.cur.Load()
	if !p.hooks.Has(hooks.ToolExecuted) {
		return
	}
	vars := map[string]string{
		"TOOL":        r.Tool,
		"INPUT":       d.redact.Scrub(string(r.Input)),
		"DURATION_MS": strconv.FormatInt(r.Duration.Milliseconds(), 10),
		"STATUS":      "ok",
	}
	if r.Code != 0 {
		vars["STATUS"] = "error"
		vars["ERROR_CODE"] = strconv.FormatInt(r.Code, 10)
		vars["ERROR_MESSAGE"] = d.redact.Scrub(r.Message)
	} else if b, err := json.Marshal(r.Result); err == nil {
		vars["RESULT"] = d.redact.Scrub(string(b))
	}
	p.hooks.Fire(hooks.ToolExecuted, vars)
}

// reload reads the configuration again and puts it in force; a bad one is refused with a log
// line, and the old one stays.
func (d *Daemon) reload(ctx context.Context) {
	d.sd.reloading()
	defer d.sd.reloaded()
	d.log.Info("reloading the configuration (SIGHUP)")
	c, err := d.opts.Load()
	if err == nil {
		err = d.apply(ctx, c)
	}
	if err != nil {
		d.log.Error("reload refused; the configuration in force is unchanged", "err", err)
	}
	if d.opts.Reloaded != nil {
		d.opts.Reloaded(err)
	}
}

// apply builds the parts of c and, when all are good, puts them in force: the logger, hooks and
// renderer at once, the hardware reopened when its section changed, the tools re-registered when
// they changed, and a new session when the server, identity or limits changed.
func (d *Daemon) apply(ctx context.Context, c *config.Config) error {
	old := d.cur.Load()
	if len(c.Server.Servers()) == 0 {
		return &config.Error{Key: "server.url", Err: errors.New("not set (nor server.urls)")}
	}
	log := slog.New(d.repeats.Handler(logHandler(c.Log, d.redact, d.opts.Stderr)))
	// The identity is read again even when the file is the same: a token or certificate renewed
	// in place is the usual reason for a reload.
	ident, err := d.identity(c, log)
	if err != nil {
		return err
	}
	changed := changedSections(old.cfg, c)
	if !ident.same(old.ident) {
		changed = append(changed, "credentials")
	}
	keys := keySums(c)
	if keys != old.keys {
		changed = append(changed, "key files")
	}
	if len(changed) == 0 {
		d.log.Info("configuration reloaded; nothing changed")
		return nil
	}
	hk, err := newHookRunner(c, ident.mac, log)
	if err != nil {
		return err
	}
	p := &parts{cfg: c, ident: ident, hw: old.hw, hooks: hk, renderer: old.renderer, toolsets: old.toolsets, keys: keys}
	// Undone if a later step fails; set to nil once the new parts are in force.
	undo := []func(){func() { hk.Close(context.Background()) }}
	defer func() {
		for _, f := range undo {
			f()
		}
	}()
	if !reflect.DeepEqual(old.cfg.ToolSets, c.ToolSets) || keys != old.keys {
		if p.toolsets, err = d.startToolSets(ctx, c, old); err != nil {
			return err
		}
		undo = append(undo, p.toolsets.Close)
	}
	ot, err := d.reopenOpenTool(c)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(old.cfg.Render, c.Render) {
		p.renderer = d.newRenderer(c)
	}
	if hardwareChanged(old.cfg, c) {
		if err := d.swapHardware(ctx, old, p); err != nil {
			ot.undo()
			return err
		}
	} else if p.reg, err = d.registry(p.hw, c, p.toolsets); err != nil {
		ot.undo()
		return err
	}
	undo = nil
	newSession := needsNewSession(old, p)
	d.logs.Set(logHandler(c.Log, d.redact, d.opts.Stderr))
	d.sd.setServer(serverNames(c.Server))
	d.cur.Store(p)
	ot.commit()
	d.wg.Go(func() { closeHooks(old.hooks, old.cfg.Hooks.Timeout) })
	if p.toolsets != old.toolsets {
		d.wg.Go(old.toolsets.Close)
	}
	if newSession {
		// Checked as at start-up; Restart refuses only after Run has returned, a stop.
		if err := d.agent.Restart(d.agentOptions(p)); err != nil {
			d.log.Warn("not reconnecting with the new settings", "err", err)
		}
	} else {
		d.agent.SetRegistry(p.reg)
	}
	if voiceChanged(old.cfg, c) {
		d.log.Warn("the voice and microphone settings take effect at the next start; still listening as before")
	}
	d.log.Info("configuration reloaded", "changed", strings.Join(changed, ", "), "tools", hardware.ToolNames(p.reg))
	return nil
}

// swapHardware replaces the parts of old with those p.cfg configures and builds p.reg on them.
// Two handles on one part would fight (the old speaker's halt muting the new one, a display
// switched off under its successor), so the old parts are halted before the new ones open; while
// that happens, calls that drive them wait, then run the tools of the new parts. If the new parts
// will not open, the old configuration's are opened again and put in force, and the error says why.
func (d *Daemon) swapHardware(ctx context.Context, old, p *parts) error {
	// A tool stuck on its part must not hang the reload: give the running calls a drain's time.
	hctx, cancel := context.WithTimeout(ctx, old.cfg.Execution.DrainTimeout)
	defer cancel()
	release, err := d.agent.Hold(hctx, hardwareResources(old.reg))
	if err != nil {
		return fmt.Errorf("waiting %s for the calls on the hardware to finish: %w", old.cfg.Execution.DrainTimeout, err)
	}
	defer release()
	if err := old.hw.Halt(); err != nil {
		d.log.Warn("halting the old hardware", "err", err)
	}
	hw, err := hardware.Open(ctx, p.cfg, d.log)
	if err == nil {
		if p.reg, err = d.registry(hw, p.cfg, p.toolsets); err == nil {
			p.hw = hw
			d.agent.SetRegistry(p.reg)
			return nil
		}
		hw.Halt()
	}
	openErr := err
	back := *old
	back.hw = d.reopen(ctx, old.cfg)
	if back.reg, err = d.registry(back.hw, old.cfg, old.toolsets); err != nil {
		d.log.Error("rebuilding the tools on the reopened hardware", "err", err)
		back.reg = old.reg
	}
	d.cur.Store(&back)
	d.agent.SetRegistry(back.reg)
	return fmt.Errorf("opening the new hardware: %w", openErr)
}

// reopen opens the parts of c again after a failed swap, every part optional, since one may have
// vanished since it was first opened; tools of parts that did are left out.
func (d *Daemon) reopen(ctx context.Context, c *config.Config) *hardware.Hardware {
	again := *c
	again.Hardware.Speaker.Optional = true
	again.Hardware.Face.Optional = true
	hw, err := hardware.Open(ctx, &again, d.log)
	if err != nil {
		// Only speech can fail now; run with simulated parts rather than none.
		d.log.Error("reopening the old hardware failed; simulating it", "err", err)
		return hardware.Sim(nil)
	}
	return hw
}

// hardwareResources lists the resources the tools of reg drive.
func hardwareResources(reg *tools.Registry) []string {
	var names []string
	for _, t := range reg.Tools() {
		names = append(names, t.Resources...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// hardwareChanged reports whether c needs other parts than old: its hardware section changed, or
// the language that picks the default voice.
func hardwareChanged(old, c *config.Config) bool {
	return !reflect.DeepEqual(old.Hardware, c.Hardware) ||
		(c.Hardware.Speech.Driver != "none" && old.Device.Language != c.Device.Language)
}

// needsNewSession reports whether the line must be dialled again for p: the server, identity,
// credentials, connection or execution limits changed. Tools and timeouts alone do not.
func needsNewSession(old, p *parts) bool {
	oc, c := old.cfg, p.cfg
	return !reflect.DeepEqual(oc.Server, c.Server) || !old.ident.same(p.ident) || oc.Connection != c.Connection ||
		oc.Execution.MaxInFlight != c.Execution.MaxInFlight || oc.Execution.MaxQueued != c.Execution.MaxQueued ||
		oc.Execution.ToolTimeout != c.Execution.ToolTimeout ||
		oc.Execution.DrainTimeout != c.Execution.DrainTimeout
}

// changedSections names the sections of the config file that differ between old and c. A section
// may be promoted from an embedded struct (the agent's, in builds that have them).
func changedSections(old, c *config.Config) []string {
	var out []string
	ov, nv := reflect.ValueOf(old).Elem(), reflect.ValueOf(c).Elem()
	for _, f := range reflect.VisibleFields(ov.Type()) {
		if f.Anonymous {
			continue
		}
		if !reflect.DeepEqual(ov.FieldByIndex(f.Index).Interface(), nv.FieldByIndex(f.Index).Interface()) {
			out = append(out, strings.ToLower(f.Name))
		}
	}
	return out
}

// serverNames is the server the device dials, or its servers separated by commas.
func serverNames(c config.ServerConfig) string { return strings.Join(c.Servers(), ",") }

// newHookRunner starts the hooks c configures, for the device mac.
func newHookRunner(c *config.Config, mac string, log *slog.Logger) (*hooks.Runner, error) {
	r, err := hooks.New(&hooks.Options{
		Commands: c.Hooks.Commands(),
		Timeout:  c.Hooks.Timeout,
		Common:   map[string]string{"SERVER": serverNames(c.Server), "MAC": mac},
		Logger:   log,
	})
	if err != nil {
		var he *hooks.CommandError
		if errors.As(err, &he) {
			return nil, &config.Error{Key: "hooks." + string(he.Event), Err: he.Err}
		}
		return nil, &config.Error{Key: "hooks", Err: err}
	}
	return r, nil
}

// closeHooks lets r's queued hooks run for at most one hook's time, then stops them.
func closeHooks(r *hooks.Runner, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r.Close(ctx)
}

// maxReply bounds the text of one reply handed to the final_reply hook; the chunks past it are
// left out.
const maxReply = 1 << 20

// logHandler is the handler c asks for on w (stderr), writing through redact.
func logHandler(c config.LogConfig, redact io.Writer, w io.Writer) slog.Handler {
	return logging.NewHandler(redact, config.LogOptions(c, w))
}

// scrubbedError is an error whose message has had the secrets taken out; errors.Is and As still
// see the original.
type scrubbedError struct {
	err  error
	text string
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.err }
