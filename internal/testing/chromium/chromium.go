// Package chromium starts Debian's chromium, headless, for tests that drive a real browser with
// chromedp: the web page's tests, and the server's tests with a browser as the attacker.
package chromium

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is where Debian's chromium package installs the browser.
const Path = "/usr/bin/chromium"

// Start starts a headless chromium with a fresh profile and no network of its own, plus flags
// ("--name" or "--name=value"), until the test ends. It returns the browser's context and the
// function that closes it. Without DEVICECTL_CHROMIUM=1 the test is skipped, saying why it
// wants a browser; with it, a missing chromium is a failure.
func Start(t testing.TB, why string, flags ...string) (context.Context, context.CancelFunc) {
	t.Helper()
	if os.Getenv("DEVICECTL_CHROMIUM") != "1" {
		t.Skip("set DEVICECTL_CHROMIUM=1 (with Debian's chromium installed, as .ci/run does) " + why)
	}
	if _, err := os.Stat(Path); err != nil {
		t.Fatalf("DEVICECTL_CHROMIUM=1 but chromium is missing (apt-get install chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// This machine has no internet: without these chromium keeps dialling Google.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	for _, f := range flags {
		name, value, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	// The first Run starts the browser, and the browser lives as long as this context.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting %s: %v", Path, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx, cancel
}

// NewTab opens a tab with a browser context of its own (no shared cookies, cache or
// connections) until the test ends, and returns it and the function that closes it.
func NewTab(t testing.TB, browser context.Context) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("opening a tab: %v", err)
	}
	t.Cleanup(cancel)
	return ctx, cancel
}
