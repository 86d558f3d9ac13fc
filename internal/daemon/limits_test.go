package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
)

// TestConfiguredLimits checks that the size limits set in the config file are the ones the
// running daemon enforces: the transport and agent tests set them through Options, so only here
// is a wrong mapping from the keys caught.
func TestConfiguredLimits(t *testing.T) {
	// connection.read_limit: a frame over it closes the line (1009) and the device dials again and
	// registers; one under it is served on the same line.
	t.Run("connection.read_limit", func(t *testing.T) {
		srv := standin.Start(t, nil)
		cfg := strings.Replace(standin.BaseConfig(t, srv.URL()), "connection:\n", "connection:\n  read_limit: 1KiB\n  backoff_min: 10ms\n  backoff_max: 50ms\n", 1)
		d := startDaemon(t, cfg, nil)
		dev := standin.NextRegistration(t, srv)
		// The stand-in server's request frame adds about 150 bytes around tool_input.
		padded := func(n int) json.RawMessage {
			return json.RawMessage(`{"level": 3, "pad": "` + strings.Repeat("x", n) + `"}`)
		}
		resp, err := dev.Execute(standin.WaitCtx(t), "amplify_volume", padded(600))
		if err != nil || resp.Error == nil || resp.Error.Code != protocol.CodeInvalidParams {
			t.Fatalf("a frame under the limit: %+v, %v; want it answered (-32602 for the extra property)", resp, err)
		}
		if _, err := dev.Execute(standin.WaitCtx(t), "amplify_volume", padded(2048)); err == nil {
			t.Fatal("a frame over connection.read_limit was answered; want the line closed")
		}
		select {
		case <-dev.Done():
		case <-standin.WaitCtx(t).Done():
			t.Fatal("the line is still up after a frame over connection.read_limit")
		}
		again := standin.NextRegistration(t, srv)
		if resp, err := again.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 4}`)); err != nil || resp.Error != nil {
			t.Errorf("call after reconnecting: %+v, %v", resp, err)
		}
		// The warning names the limit in force: the configured one, not the 1 MiB default.
		if log := d.stderr.String(); !regexp.MustCompile(`level=WARN msg="message over the read limit: closing the connection" .*limit=1024\n`).MatchString(log) {
			t.Errorf("the log does not say the line closed over the 1024-byte limit:\n%s", log)
		}
	})

	// execution.max_in_flight and execution.max_queued: with 1 call running, held up in the face
	// program, two calls on other hardware (so they do not merely wait for the face) are both
	// refused -32002 with no queue; with a queue of 1, exactly one is, and the other runs once the
	// slot is free. Which of the two is refused depends on their order on the line; how many does
	// not.
	for _, queued := range []int{0, 1} {
		t.Run(fmt.Sprintf("execution.max_queued=%d", queued), func(t *testing.T) {
			srv := standin.Start(t, nil)
			dir := t.TempDir()
			// Two FIFOs: the face program says it is showing smile by opening the first, which
			// blocks until the test reads it, then waits for a line on the second.
			showing, release := filepath.Join(dir, "showing"), filepath.Join(dir, "release")
			for _, fifo := range []string{showing, release} {
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			face := shscript.Write(t, dir, "face.sh", `[ "$1" = smile ] || exit 0
echo smile > "`+showing+`"
read line < "`+release+`"
`)
			cfg := strings.Replace(standin.BaseConfig(t, srv.URL()), "  mode: sim\n",
				"  mode: config\n  face:\n    driver: command\n    command: ["+face+"]\n", 1) +
				fmt.Sprintf("execution:\n  max_in_flight: 1\n  max_queued: %d\n", queued)
			startDaemon(t, cfg, nil)
			dev := standin.NextRegistration(t, srv)
			call := func(tool, input string, answers chan<- error) {
				resp, err := dev.Execute(standin.WaitCtx(t), tool, json.RawMessage(input))
				if err == nil && resp.Error != nil {
					err = resp.Error
				}
				answers <- err
			}
			smiled := make(chan error, 1)
			go call("set_virtual_human_expression", `{"expression": "smile"}`, smiled)
			if err := fifoLine(showing, "smile"); err != nil {
				t.Fatalf("the face program on smile: %v", err)
			}
			answers := make(chan error, 2)
			go call("amplify_volume", `{"level": 9}`, answers)
			go call("amplify_volume", `{"level": 10}`, answers)
			for range 2 - queued { // the refusals come at once; the queued call waits for the slot
				var re *jsonrpc2.Error
				if err := <-answers; !errors.As(err, &re) || re.Code != protocol.CodeBusy || re.Message != "device busy" {
					t.Fatalf("a call past the queue: %v; want -32002 device busy", err)
				}
			}
			if err := fifoWrite(release, "go"); err != nil {
				t.Fatalf("releasing the face program: %v", err)
			}
			if err := <-smiled; err != nil {
				t.Errorf("the call holding the slot: %v", err)
			}
			for range queued {
				if err := <-answers; err != nil {
					t.Errorf("the queued call: %v; want it run once the slot was free", err)
				}
			}
		})
	}
}

// A token the server streams back split over several chunks must not reach stdout either: the
// daemon says a server that echoes the token "has it shown nowhere" (daemon.go, newRenderer).
func TestStreamedReplyScrubbed(t *testing.T) {
	// The renderer writes each chunk as it comes; the daemon's stream redactors hold back what may
	// be the start of a secret until the next write shows whether it is one.
	srv := standin.Start(t, nil)
	d := startDaemon(t, standin.BaseConfig(t, srv.URL()), func(k string) string {
		if k == config.TokenEnv {
			return hiddenToken
		}
		return ""
	})
	dev := standin.NextRegistration(t, srv)
	// Say streams the text as three chunks and a final: the token straddles a chunk boundary.
	if err := dev.Say(standin.WaitCtx(t), "your token is "+hiddenToken); err != nil {
		t.Fatal(err)
	}
	// Messages are handled in order before a request is answered: once this call is answered,
	// the reply has been rendered.
	if _, err := dev.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if out := d.stdout.String(); strings.Contains(out, hiddenToken) || !strings.Contains(out, "your token is") {
		t.Errorf("stdout %q: want the reply with the token redacted", out)
	}
}

// fifoLine reads the FIFO at path, which blocks until a writer opens it, and wants the line want
// within 10s.
func fifoLine(path, want string) error {
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(path) // returns when the writer closes
		got <- strings.TrimSpace(string(b))
	}()
	select {
	case line := <-got:
		if line != want {
			return fmt.Errorf("%s said %q, want %q", filepath.Base(path), line, want)
		}
		return nil
	case <-time.After(10 * time.Second):
		// Unblock the reader: opening for writing completes its open, and closing ends its read.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-got
		return fmt.Errorf("nothing on %s within 10s", filepath.Base(path))
	}
}

// fifoWrite writes line to the FIFO at path, which blocks until a reader opens it, within 10s.
func fifoWrite(path, line string) error {
	done := make(chan error, 1)
	go func() { done <- os.WriteFile(path, []byte(line+"\n"), 0o600) }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		// Unblock the writer: opening for reading completes its open.
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer f.Close()
		}
		<-done
		return fmt.Errorf("no reader on %s within 10s", filepath.Base(path))
	}
}
