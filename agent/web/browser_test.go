//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/devicectl/devicectl/agent/server"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/testing/chromium"
	"github.com/devicectl/devicectl/protocol"
)

var update = flag.Bool("update", false, "rewrite testdata/page.png from this run's screenshot")

const (
	testMAC = "AA-BB-CC-DD-EE-FF"
	golden  = "testdata/page.png"
	// The screenshot: a phone's viewport at a fixed scale, so the golden is the same on every
	// machine with the same fonts.
	viewW, viewH = 412, 915
	// A pixel differs when a channel differs by more than pixelTolerance (font antialiasing
	// moves a few levels); the page matches when at most diffFraction of its pixels differ.
	pixelTolerance = 48
	diffFraction   = 0.01
	// stepTimeout bounds each step of the walk (a DOM condition, an action) on a loaded machine.
	stepTimeout = 30 * time.Second
)

// simServer is the agent server as `devicectl sim --web` runs it, on loopback, with its
// simulated device.
type simServer struct {
	t       *testing.T
	srv     *server.Server
	url     string // ws://... and http://... share it
	c       *config.Config
	speaker atomic.Int64 // the simulated speaker's volume, as its hook saw it
	dev     *simdevice.Device
	finals  chan string // what the device was given to show and speak as a final
}

func startSim(t *testing.T, token string) *simServer {
	t.Helper()
	c := config.Defaults()
	if token != "" {
		c.Agent.TokenFile = filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(c.Agent.TokenFile, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.Device.MAC = testMAC
	c.Log.Level = slog.LevelWarn
	c.Agent.WaitForControl = true // as sim: the face has changed before the reply is drawn
	c.Agent.Web = true
	srv, err := server.New(&server.Options{Config: c, DBPath: filepath.Join(t.TempDir(), "agent.db"), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s := &simServer{t: t, srv: srv, url: ln.Addr().String(), c: c, finals: make(chan string, 64)}
	s.speaker.Store(-1)
	t.Cleanup(func() {
		if s.dev != nil {
			if err := s.dev.Close(); err != nil {
				t.Errorf("closing the device: %v", err)
			}
		}
		if err := errors.Join(srv.Close(), <-served); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	s.connect()
	return s
}

// connect starts the simulated device, which registers with the server.
func (s *simServer) connect() {
	s.t.Helper()
	// The device runs until disconnect or the cleanup closes it; Start itself waits at most
	// simdevice.RegisterWait for the registration.
	dev, err := simdevice.Start(context.WithoutCancel(s.t.Context()), s.c, "ws://"+s.url+"/", testMAC, "test",
		&devhw.SimHooks{OnVolume: func(v int) { s.speaker.Store(int64(v)) }}, s.render, slog.New(slog.DiscardHandler))
	if err != nil {
		s.t.Fatal(err)
	}
	s.dev = dev
}

// render keeps the device's finals for the test to read; past the channel's room they are
// dropped, and a test expecting one fails.
func (s *simServer) render(m protocol.AIMessage) {
	if m.Type != "final" {
		return
	}
	select {
	case s.finals <- m.Content:
	default:
	}
}

// disconnect stops the device: its line closes.
func (s *simServer) disconnect() {
	s.t.Helper()
	if err := s.dev.Close(); err != nil {
		s.t.Fatalf("closing the device: %v", err)
	}
	s.dev = nil
}

// browser starts a headless chromium and collects what the page writes to its console. Its
// cleanup fails the test on any console error, warning or uncaught exception.
func browser(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := chromium.Start(t, "to test the page in a browser", "--hide-scrollbars", "--font-render-hinting=none")
	watchConsole(t, ctx, cancel)
	return ctx
}

// newTab opens a tab with a browser context of its own (its own cookies), closed by the test's
// cleanup, and watches its console too.
func newTab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromium.NewTab(t, browser)
	watchConsole(t, ctx, cancel)
	return ctx
}

// watchConsole collects what the tab writes to its console; once cancel has closed the tab, the
// test fails on any console error, warning or uncaught exception it saw.
func watchConsole(t *testing.T, ctx context.Context, cancel context.CancelFunc) {
	var mu sync.Mutex
	var problems []string
	done := make(chan struct{})
	msgs := chromedp.Console(ctx)
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return // the tab is closing
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleException, chromedp.ConsoleWarning:
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("browser console: %s", p)
		}
	})
}

// step runs actions with a deadline.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript expression is truthy.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	step(t, ctx, "waiting until "+what, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingTimeout(stepTimeout))(ctx, tg)
		return err
	}))
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Selectors of the page, as JavaScript expressions.
const (
	jsCard   = `document.querySelector('li.device[data-mac="` + testMAC + `"]')`
	jsConn   = jsCard + `?.querySelector('.conn')?.textContent`
	jsVolume = jsCard + `?.querySelector('.volume')?.textContent`
	jsFace   = jsCard + `?.querySelector('img.face')`
)

// TestPage walks through the page in chromium as a person would, with the keyboard only: it
// loads, a volume and a face are asked for and shown, the reply streams in, the tool calls are
// logged, and the device's disconnection and return are shown. The page's look is compared
// with testdata/page.png (go test -run TestPage -update rewrites it).
func TestPage(t *testing.T) {
	// The server first: cleanups run last first, so the tab closes before the server does and
	// the page never sees its stream refused.
	s := startSim(t, "")
	ctx := browser(t)
	page := "http://" + s.url + "/"

	// Load: the device is there, with the status the page read when it registered.
	step(t, ctx, "loading "+page,
		chromedp.EmulateViewport(viewW, viewH, chromedp.EmulateScale(1)),
		chromedp.Navigate(page))
	waitFor(t, ctx, "the device is shown connected at the sim's volume",
		`document.body.dataset.ready === "true" && `+jsConn+` === "connected" && `+jsVolume+` === "`+strconv.Itoa(sim.DefaultVolume)+`"`)
	if alt := eval[string](t, ctx, jsFace+`.alt`); alt != "face: idle" {
		t.Errorf("the face's alt text is %q, want %q", alt, "face: idle")
	}
	// Every control has a label a screen reader can read.
	if unlabelled := eval[[]string](t, ctx, `[...document.querySelectorAll("input, select, textarea, meter")]
		.filter(e => e.labels.length === 0 && !e.getAttribute("aria-label")).map(e => e.outerHTML)`); len(unlabelled) > 0 {
		t.Errorf("controls without a label: %q", unlabelled)
	}

	// Keyboard only: the first Tab reaches the conversation box, Enter sends.
	step(t, ctx, "tabbing to the conversation box", chromedp.KeyEvent("\t"))
	if id := eval[string](t, ctx, `document.activeElement.id`); id != "say-text" {
		t.Fatalf("the first Tab focused #%s, want #say-text", id)
	}
	// Each chunk is recorded as it arrives, with what the reply showed then.
	eval[bool](t, ctx, `window.seen = [];
		state.source.addEventListener("chunk", (e) => {
			const r = document.querySelector('li.reply[data-turn="' + JSON.parse(e.data).id + '"]');
			window.seen.push({chunk: JSON.parse(e.data).text, shown: r.querySelector(".text").textContent, pending: r.classList.contains("pending")});
		}); true`)
	step(t, ctx, "typing 把音量调到30", chromedp.KeyEvent("把音量调到30\r"))
	waitFor(t, ctx, "the volume reads 30", jsVolume+` === "30" && `+jsCard+`.querySelector("meter").value === 30`)
	if v := s.speaker.Load(); v != 30 {
		t.Errorf("the sim's speaker is at %d, want 30", v)
	}
	waitFor(t, ctx, "the reply is complete", `document.querySelector('li.reply[data-turn="1"]:not(.pending)')`)
	reply := eval[string](t, ctx, `document.querySelector('li.reply[data-turn="1"] .text').textContent`)
	type seenChunk struct {
		Chunk, Shown string
		Pending      bool
	}
	seen := eval[[]seenChunk](t, ctx, `window.seen`)
	if len(seen) == 0 {
		t.Fatalf("no chunk reached the page; the reply reads %q", reply)
	}
	streamed := ""
	for i, c := range seen {
		streamed += c.Chunk
		if c.Shown != streamed || !c.Pending {
			t.Errorf("chunk %d (%q): the reply showed %q (pending %t), want %q while the turn is running", i, c.Chunk, c.Shown, c.Pending, streamed)
		}
	}
	if reply != streamed || !bytes.Contains([]byte(reply), []byte("30")) {
		t.Errorf("the reply reads %q; the chunks were %q; want them to agree and to mention 30", reply, streamed)
	}
	if id := eval[string](t, ctx, `document.activeElement.id`); id != "say-text" {
		t.Errorf("after sending, the focus is on #%s, want it back in #say-text", id)
	}
	waitFor(t, ctx, "amplify_volume is in the tool log", `[...document.querySelectorAll("#log li")].some(li =>
		li.querySelector(".name").textContent === "amplify_volume" &&
		li.querySelector(".input").textContent === 'in: {"level":30}' &&
		li.querySelector(".result")?.textContent.includes('"status":"success"') &&
		/^\d+\.\d ms$/.test(li.querySelector(".ms").textContent))`)

	// The face: alt text and image.
	step(t, ctx, "typing 笑一个", chromedp.KeyEvent("笑一个\r"))
	waitFor(t, ctx, "the face is smile", jsFace+`.alt === "face: smile" && `+jsFace+`.complete && `+jsFace+`.naturalWidth > 0`)
	src := eval[string](t, ctx, jsFace+`.src`)
	checkFace(t, src, hal.Smile)
	waitFor(t, ctx, "the second reply is complete and the face call is logged",
		`document.querySelector('li.reply[data-turn="2"]:not(.pending)') &&
		[...document.querySelectorAll("#log .name")].some(n => n.textContent === "set_virtual_human_expression")`)

	// A phone's width holds the page: nothing scrolls sideways.
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > viewW {
		t.Errorf("the page is %dpx wide on a %dpx screen", w, viewW)
	}
	screenshot(t, ctx)

	// The device goes, and comes back.
	s.disconnect()
	waitFor(t, ctx, "the device is shown disconnected", jsConn+`?.startsWith("disconnected") && `+jsCard+`.classList.contains("offline")`)
	// Each sim device has a Client-Id of its own, and the hub binds the MAC to the first: the
	// operator forgets the binding, as for a device replaced.
	if _, err := s.srv.Hub.Forget(t.Context(), testMAC); err != nil {
		t.Fatal(err)
	}
	s.connect()
	waitFor(t, ctx, "the device is shown connected again", jsConn+` === "connected" && !`+jsCard+`.classList.contains("offline")`)
	// The returning device is a new sim device, at its defaults: the page shows what it read
	// from it at the new registration, not what it remembered.
	waitFor(t, ctx, "the status read after the reconnection is shown",
		jsVolume+` === "`+strconv.Itoa(sim.DefaultVolume)+`" && `+jsFace+`.alt === "face: idle"`)
}

// checkFace fetches the face the page shows and compares it with faces.Draw's.
func checkFace(t *testing.T, src string, e hal.Expression) {
	t.Helper()
	resp, err := http.Get(src)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", src, resp.Status, err)
	}
	got, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("GET %s: not a PNG: %v", src, err)
	}
	want := faces.Draw(e, 128, 64)
	if got.Bounds() != want.Bounds() {
		t.Fatalf("the face is %v, want %v", got.Bounds(), want.Bounds())
	}
	for y := range want.Rect.Dy() {
		for x := range want.Rect.Dx() {
			if g, _, _, _ := got.At(x, y).RGBA(); uint8(g>>8) != want.GrayAt(x, y).Y {
				t.Fatalf("the face at %s differs from faces.Draw(%s) at (%d,%d)", src, e, x, y)
			}
		}
	}
}

// screenshot compares the page with the golden PNG, once what varies from run to run (uptimes,
// durations) is hidden and the caret is gone.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	eval[bool](t, ctx, `(() => {
		// Through the CSSOM: the page's Content-Security-Policy refuses inline styles.
		const sheet = document.styleSheets[0];
		sheet.insertRule("[data-vary] { visibility: hidden !important; }", sheet.cssRules.length);
		sheet.insertRule("* { caret-color: transparent !important; }", sheet.cssRules.length);
		document.activeElement.blur();
		return true;
	})()`)
	waitFor(t, ctx, "fonts and images are loaded", `document.fonts.status === "loaded" && [...document.images].every(i => i.complete)`)
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	shot, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if *update {
		if err := os.WriteFile(golden, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", golden)
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestPage -update to make it)", err)
	}
	if msg := compareImages(shot, want); msg != "" {
		actual := filepath.Join(os.TempDir(), "devicectl-web-page.actual.png")
		if err := os.WriteFile(actual, shot, 0o644); err != nil {
			t.Logf("keeping the screenshot: %v", err)
		}
		t.Errorf("the page does not look like %s: %s; this run's screenshot is %s (go test -run TestPage -update to accept it)", golden, msg, actual)
	}
}

// compareImages says how two PNGs differ beyond the tolerance, or "" when they match.
func compareImages(gotPNG, wantPNG []byte) string {
	got, err := png.Decode(bytes.NewReader(gotPNG))
	if err != nil {
		return fmt.Sprintf("the screenshot is not a PNG: %v", err)
	}
	want, err := png.Decode(bytes.NewReader(wantPNG))
	if err != nil {
		return fmt.Sprintf("the golden is not a PNG: %v", err)
	}
	if got.Bounds() != want.Bounds() {
		return fmt.Sprintf("size %v, want %v", got.Bounds().Size(), want.Bounds().Size())
	}
	b := got.Bounds()
	differ := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if !near(got.At(x, y), want.At(x, y)) {
				differ++
			}
		}
	}
	total := b.Dx() * b.Dy()
	if float64(differ) > diffFraction*float64(total) {
		return fmt.Sprintf("%d of %d pixels (%.2f%%) differ by more than %d levels, over the %.2f%% allowed",
			differ, total, 100*float64(differ)/float64(total), pixelTolerance, 100*diffFraction)
	}
	return ""
}

func near(a, b color.Color) bool {
	ar, ag, ab, aa := a.RGBA()
	br, bg, bb, ba := b.RGBA()
	for _, d := range [][2]uint32{{ar, br}, {ag, bg}, {ab, bb}, {aa, ba}} {
		x, y := int(d[0]>>8), int(d[1]>>8)
		if x-y > pixelTolerance || y-x > pixelTolerance {
			return false
		}
	}
	return true
}

// With agent.token_file set, the page asks for the token once (typed, or from the link's
// fragment), and is live from then on; the token leaves the address bar.
func TestPageWithToken(t *testing.T) {
	const token = "tok-3f9a1c"
	// The server first: cleanups run last first, so the tab closes before the server does and
	// the page never sees its stream refused.
	s := startSim(t, token)
	ctx := browser(t)
	page := "http://" + s.url + "/"

	step(t, ctx, "loading "+page, chromedp.EmulateViewport(viewW, viewH, chromedp.EmulateScale(1)), chromedp.Navigate(page))
	waitFor(t, ctx, "the page asks for the token", `!document.getElementById("login").hidden && document.activeElement.id === "token"`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#device-list li").length`); n != 0 {
		t.Errorf("the locked page shows %d devices", n)
	}
	// Locked, the page says so and shows nothing it cannot read: no empty device list ("No
	// device is connected" would be a lie), no box to say something that cannot be sent.
	if shown := eval[[]string](t, ctx, `[...document.querySelectorAll("main section, #say-text")]
		.filter(e => e.checkVisibility()).map(e => e.id)`); len(shown) > 0 {
		t.Errorf("the locked page shows %q", shown)
	}
	if text := eval[string](t, ctx, `document.body.innerText`); !strings.Contains(text, "This page is locked") || strings.Contains(text, "No device is connected") {
		t.Errorf("the locked page reads %q; want it to say it is locked, and not that no device is connected", text)
	}
	if status := eval[string](t, ctx, `document.getElementById("link").textContent`); status != "locked" {
		t.Errorf("the locked page's status reads %q, want locked", status)
	}
	step(t, ctx, "typing the token", chromedp.KeyEvent(token+"\r"))
	waitFor(t, ctx, "the page is live", `document.body.dataset.ready === "true" && `+jsConn+` === "connected" && document.getElementById("login").hidden &&
		[...document.querySelectorAll("main section")].every(s => s.checkVisibility())`)
	if id := eval[string](t, ctx, `document.activeElement.id`); id != "say-text" {
		t.Errorf("after the token, the focus is on #%s, want #say-text", id)
	}
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("the page's script can read cookies %q; the session cookie must be HttpOnly", c)
	}

	// A link with the token in its fragment, in a tab with no cookie yet.
	tab := newTab(t, ctx)
	step(t, tab, "loading the page in the new tab", chromedp.Navigate(page))
	waitFor(t, tab, "the new tab asks for the token", `!document.getElementById("login").hidden`)
	link := page + "?from=link"
	step(t, tab, "opening the link with the token", chromedp.Navigate(link+"#token="+token))
	waitFor(t, tab, "the page is live from the link", `document.body.dataset.ready === "true" && `+jsConn+` === "connected"`)
	if u := eval[string](t, tab, `location.href`); u != link {
		t.Errorf("the address bar shows %q after the login, want %q (no token)", u, link)
	}
}
