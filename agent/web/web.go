//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
	"github.com/devicectl/devicectl/internal/bearer"
	"github.com/devicectl/devicectl/protocol"
)

//go:embed static
var staticFiles embed.FS

// Turner runs the agent's turns; *agent.Agent is one.
type Turner interface {
	Turn(ctx context.Context, r agent.Request) iter.Seq[agent.Event]
}

// Options configure a Handler. New copies them.
type Options struct {
	Hub   *hub.Hub // the devices; required
	Agent Turner   // what the conversation box talks to; required
	// Token is the bearer token of the server's HTTP API (agent.token_file). Empty: no
	// credentials, and only loopback Host names are answered.
	Token string
	// ShowThoughts shows the planner's thoughts, dimmed, in the conversation.
	ShowThoughts bool
	// SessionID is the agent session of the page's turns: every open page shares one
	// conversation. "" is DefaultSessionID.
	SessionID string
	// MaxTurns bounds the turns running at once; a POST beyond it is answered 503. 0 is
	// DefaultMaxTurns.
	MaxTurns int
	// CallBytes is what the page keeps of one call's input, result or error
	// (agent.limits.web_call_bytes); past it the rest is cut and a marker says how long it was.
	// 0 is DefaultCallBytes.
	CallBytes int64
	// Calls is how many calls the page keeps per device, and of the server's own tools
	// (agent.limits.web_calls). 0 is DefaultCalls.
	Calls int
	// Reminders lists and cancels each device's reminders and makes a device speak; nil: the
	// page shows no reminders and has no Announce button.
	Reminders Reminders
	// RemindersEvery is how often an open page reads the reminders again, for those set, said
	// or canceled elsewhere; it also reads them at once after a tool call it shows and after a
	// cancel. 0 is DefaultRemindersEvery.
	RemindersEvery time.Duration
	Logger         *slog.Logger // nil discards
}

// Reminders is what the page needs of the agent's reminders and announcements. The page's
// routes check the token and the origin; these are called only for a page that may.
type Reminders interface {
	// Reminders returns what is to come on the device mac, soonest first.
	Reminders(ctx context.Context, mac string) ([]Reminder, error)
	// CancelReminder cancels one; false when there was no such reminder still to come.
	CancelReminder(ctx context.Context, id string) (bool, error)
	// Announce makes the device mac ("" the only one, "all" every one) show and speak text now,
	// as the announce tool does, and returns the devices that said it. An *agent.ToolError with
	// protocol.CodeInvalidParams is the caller's mistake (the page answers 400).
	Announce(ctx context.Context, mac, text string) ([]string, error)
}

// Reminder is one reminder or timer as the page lists it.
type Reminder struct {
	ID    string
	Text  string // "" for a plain timer
	Timer bool
	Due   time.Time // in the agent's time zone: the page shows its clock time
	Every string    // "every day at 08:00"; "" for a one-off
}

// Defaults of Options.
const (
	DefaultSessionID = "web"
	DefaultMaxTurns  = 4
	DefaultCallBytes = 4 << 10
	DefaultCalls     = 100
	// DefaultRemindersEvery is Options.RemindersEvery's default: a reminder set by voice or by
	// a script shows within it, and a page costs the store a read per device that often.
	DefaultRemindersEvery = 10 * time.Second
)

// maxCallBytes bounds Options.CallBytes: a page holds calls by the hundred.
const maxCallBytes = 16 << 20

// Paths the handler serves; Handles reports whether a request is for one of them.
const (
	PathPage      = "/"              // the page (also at /web/)
	pathPrefix    = "/web/"          // everything else
	pathEvents    = "/web/events"    // GET: the Server-Sent Events stream
	pathSay       = "/web/say"       // POST {"text","mac"}: start a turn
	pathAnnounce  = "/web/announce"  // POST {"text","mac"}: the device says it now
	pathReminders = "/web/reminders" // GET: each device's reminders; POST .../{id}/cancel
	pathSession   = "/web/session"   // GET: {"authorized":bool}; POST with the bearer token: the cookie
	pathFace      = "/web/face/"     // GET /web/face/{expression}.png
	pathStatic    = "/web/static/"   // the embedded CSS and JS
	cookieName    = "devicectl_web"  // the session cookie
	faceW         = 128              // the face PNG's size: an OLED's, scaled up by the page
	faceH         = 64
)

// statusTimeout bounds the status read made when a device registers.
const statusTimeout = 10 * time.Second

// Handler serves the page. Make it with New, mount it (it is an http.Handler), Close it.
type Handler struct {
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	faces   map[hal.Expression][]byte // PNGs, drawn once
	cookie  string                    // the session cookie's value; "" without a token
	st      *state
	turns   chan struct{}   // a slot per running turn
	closing context.Context // done when Close is called: streams and turns end
	stop    context.CancelFunc
	unsub   func()

	mu     sync.Mutex // guards closed, so that no goroutine starts once Close waits
	closed bool
	wg     sync.WaitGroup // the hub watcher, status reads, turns
}

// goTracked runs f in a goroutine Close waits for; after Close it runs nothing and says so.
func (h *Handler) goTracked(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Go(f)
	return true
}

// New returns a Handler watching o.Hub's devices. Close it to stop the goroutines it starts.
func New(o *Options) (*Handler, error) {
	if o == nil || o.Hub == nil || o.Agent == nil {
		return nil, errors.New("web: Options.Hub and Options.Agent are required")
	}
	opts := *o
	if opts.SessionID == "" {
		opts.SessionID = DefaultSessionID
	}
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = DefaultMaxTurns
	}
	if opts.CallBytes <= 0 {
		opts.CallBytes = DefaultCallBytes
	}
	if opts.CallBytes > maxCallBytes {
		return nil, fmt.Errorf("web: Options.CallBytes (agent.limits.web_call_bytes) is %d, over the most, %d", opts.CallBytes, maxCallBytes)
	}
	if opts.Calls <= 0 {
		opts.Calls = DefaultCalls
	}
	if opts.RemindersEvery <= 0 {
		opts.RemindersEvery = DefaultRemindersEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{
		opts:  opts,
		log:   opts.Logger.With("component", "web"),
		faces: make(map[hal.Expression][]byte),
		st:    newState(opts.ShowThoughts, int(opts.CallBytes), opts.Calls, opts.Reminders != nil, opts.RemindersEvery),
		turns: make(chan struct{}, opts.MaxTurns),
	}
	for _, e := range hal.Expressions() {
		var b bytes.Buffer
		if err := png.Encode(&b, faces.Draw(e, faceW, faceH)); err != nil {
			return nil, fmt.Errorf("web: drawing the face %s: %w", e, err)
		}
		h.faces[e] = b.Bytes()
	}
	if opts.Token != "" {
		m := hmac.New(sha256.New, []byte(opts.Token))
		m.Write([]byte("devicectl web session v1"))
		h.cookie = hex.EncodeToString(m.Sum(nil))
	}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, fmt.Errorf("web: the embedded files: %w", err)
	}
	cop := http.NewCrossOriginProtection()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.servePage)
	mux.HandleFunc("GET /web/{$}", h.servePage)
	mux.Handle("GET "+pathStatic, http.StripPrefix(pathStatic, http.FileServerFS(static)))
	mux.HandleFunc("GET "+pathFace+"{file}", h.serveFace)
	mux.HandleFunc("GET "+pathSession, h.serveSessionState)
	mux.Handle("POST "+pathSession, cop.Handler(http.HandlerFunc(h.serveLogin)))
	mux.Handle("GET "+pathEvents, h.auth(http.HandlerFunc(h.serveEvents)))
	mux.Handle("POST "+pathSay, cop.Handler(h.auth(http.HandlerFunc(h.serveSay))))
	if opts.Reminders != nil {
		mux.Handle("GET "+pathReminders, h.auth(http.HandlerFunc(h.serveReminders)))
		mux.Handle("POST "+pathReminders+"/{id}/cancel", cop.Handler(h.auth(http.HandlerFunc(h.serveCancel))))
		mux.Handle("POST "+pathAnnounce, cop.Handler(h.auth(http.HandlerFunc(h.serveAnnounce))))
	}
	h.mux = mux

	h.closing, h.stop = context.WithCancel(context.Background())
	events, unsub := opts.Hub.Subscribe(0)
	h.unsub = unsub
	// Devices registered before the subscription are read now; one registering meanwhile may
	// be seen twice, which only refreshes it.
	for _, d := range opts.Hub.Devices() {
		h.registered(d)
	}
	h.goTracked(func() { h.watch(events) })
	return h, nil
}

// Handles reports whether r is for the page: / and what is under /web/.
func Handles(r *http.Request) bool {
	return r.URL.Path == PathPage || strings.HasPrefix(r.URL.Path, pathPrefix)
}

// ServeHTTP serves the page, its files, its event stream and its POSTs.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token == "" && !loopbackHost(r.Host) {
		http.Error(w, "the devicectl web page without agent.token_file answers only on a loopback address (127.0.0.1, localhost, [::1])", http.StatusForbidden)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// Close ends the event streams and the turns, and waits for every goroutine the handler started.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.stop()
	h.unsub()
	h.wg.Wait()
	return nil
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, staticFiles, "static/index.html")
}

func (h *Handler) serveFace(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("file"), ".png")
	b := h.faces[hal.Expression(name)]
	if !ok || b == nil {
		http.Error(w, fmt.Sprintf("no face %q: one of %v, as NAME.png", r.PathValue("file"), hal.Expressions()), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Write(b)
}

// serveSessionState tells the page whether it must ask for the token. It answers 200 either way:
// a 401 would be a console error in the browser for what is an ordinary first visit.
func (h *Handler) serveSessionState(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "{\"authorized\":%t}\n", h.authorized(r))
}

func (h *Handler) authorized(r *http.Request) bool {
	if h.opts.Token == "" || h.bearerOK(r) {
		return true
	}
	c, err := r.Cookie(cookieName)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(h.cookie)) == 1
}

// auth lets a request through when no token is configured, or it carries the token as a bearer
// token or the session cookie.
func (h *Handler) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.authorized(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
		http.Error(w, "the page needs the agent's token (agent.token_file)", http.StatusUnauthorized)
	})
}

func (h *Handler) bearerOK(r *http.Request) bool { return bearer.Matches(r, h.opts.Token) }

// serveLogin trades the bearer token for the session cookie, so that the event stream (which a
// browser cannot give a header) is authorized too. The cookie holds an HMAC of the token, never
// the token, and changes when the token does.
func (h *Handler) serveLogin(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.bearerOK(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
		http.Error(w, "wrong token: it is the content of the file agent.token_file names", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: h.cookie, Path: pathPrefix,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	w.WriteHeader(http.StatusNoContent)
}

// maxSay bounds a POST /web/say body.
const maxSay = 16 << 10

type sayRequest struct {
	Text string `json:"text"`
	MAC  string `json:"mac"` // "" : the only device
}

// readSay reads the body of a POST /web/say or /web/announce, with its text trimmed. Refused (too
// long, not that JSON, no text) it answers the request itself, the empty text with ifEmpty, and
// returns false.
func readSay(w http.ResponseWriter, r *http.Request, ifEmpty string) (sayRequest, bool) {
	var req sayRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSay))
	if err != nil {
		http.Error(w, fmt.Sprintf("reading the request: %v", err), http.StatusRequestEntityTooLarge)
		return req, false
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, fmt.Sprintf(`the body must be {"text": "...", "mac": "..."}: %v`, err), http.StatusBadRequest)
		return req, false
	}
	req.Text = strings.TrimSpace(req.Text)
	if req.Text == "" {
		http.Error(w, "text is empty: "+ifEmpty, http.StatusBadRequest)
		return req, false
	}
	return req, true
}

func (h *Handler) serveSay(w http.ResponseWriter, r *http.Request) {
	req, ok := readSay(w, r, "say something")
	if !ok {
		return
	}
	select {
	case h.turns <- struct{}{}:
	default:
		http.Error(w, fmt.Sprintf("%d turns are running already; try again when one ends", cap(h.turns)), http.StatusServiceUnavailable)
		return
	}
	id := h.st.startTurn(req.Text, req.MAC)
	if !h.goTracked(func() {
		defer func() { <-h.turns }()
		h.runTurn(id, req)
	}) {
		<-h.turns
		h.st.endTurn(id, "", "the server is shutting down")
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, "{\"turn\":%d}\n", id)
}

// runTurn runs one turn, showing its events on every page.
func (h *Handler) runTurn(id int, req sayRequest) {
	show := h.shower(id)
	for e := range h.opts.Agent.Turn(h.closing, agent.Request{Text: req.Text, MAC: req.MAC, SessionID: h.opts.SessionID}) {
		show(e)
	}
}

// DeviceTurn shows on every page a turn a device started with what its person said (source
// "voice": what its microphone heard); the caller runs the turn and passes each event to show.
func (h *Handler) DeviceTurn(mac, text, source string) (show func(agent.Event)) {
	if source == "" {
		source = "device"
	}
	return h.shower(h.st.startTurnFrom(text, mac, source))
}

// shower returns what shows turn id's events, one at a time, in order.
func (h *Handler) shower(id int) func(agent.Event) {
	type started struct {
		at    time.Time
		input json.RawMessage
	}
	local := make(map[string][]started) // the server's own tools called and not yet answered
	return func(e agent.Event) {
		switch e.Kind {
		case agent.EventChunk:
			h.st.turnText(id, "chunk", e.Text)
		case agent.EventThought:
			h.st.turnText(id, "thought", e.Text)
		case agent.EventFinal:
			h.st.endTurn(id, e.Text, "")
		case agent.EventError:
			h.st.endTurn(id, "", e.Err.Error())
		case agent.EventToolCall:
			// A device's tools are logged from the hub, whoever calls them; the server's own
			// only here.
			if !h.deviceTool(e.Tool) {
				local[e.Tool] = append(local[e.Tool], started{time.Now(), e.Input})
			}
		case agent.EventToolResult:
			if s := local[e.Tool]; len(s) > 0 {
				local[e.Tool] = s[1:]
				h.st.addCall(callView{Tool: e.Tool, Where: "server", Input: s[0].input, Result: e.Result, Err: errText(e.Err), Duration: time.Since(s[0].at)})
			}
		}
	}
}

// deviceTool reports whether a registered device declares the tool.
func (h *Handler) deviceTool(name string) bool {
	for _, d := range h.opts.Hub.Devices() {
		for _, t := range d.Tools {
			if t.Name == name {
				return true
			}
		}
	}
	return false
}

// watch follows the hub until the subscription ends.
func (h *Handler) watch(events <-chan hub.Event) {
	for e := range events {
		switch e.Kind {
		case hub.Registered, hub.ToolsChanged:
			h.registered(e.Device)
		case hub.Disconnected:
			h.st.disconnected(e.Device.MAC, errText(e.Reason))
		case hub.CallDone:
			h.st.addCall(callView{MAC: e.Device.MAC, Tool: e.Tool, Where: "device", Input: e.Input, Result: e.Result, Err: errText(e.Err), Duration: e.Duration})
			if e.Err == nil {
				h.st.applyCall(e.Device.MAC, e.Tool, e.Input, e.Result)
			}
		}
	}
}

// registered shows a device as connected and reads its status in the background.
func (h *Handler) registered(d hub.Device) {
	h.st.registered(d)
	for _, t := range d.Tools {
		if t.Name == protocol.ToolStatus {
			h.goTracked(func() {
				ctx, cancel := context.WithTimeout(h.closing, statusTimeout)
				defer cancel()
				// The result reaches the page through the hub's CallDone event.
				if _, err := h.opts.Hub.Call(ctx, d.MAC, protocol.ToolStatus, json.RawMessage(`{}`)); err != nil {
					h.log.Debug("reading the status of a device that registered", "mac", d.MAC, "err", err)
				}
			})
			return
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// loopbackHost reports whether a Host header names this machine: localhost or a loopback IP,
// with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
