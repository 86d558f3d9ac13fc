package voice

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/devicectl/devicectl/internal/procgroup"
	stderrtail "github.com/devicectl/devicectl/internal/tail"
)

// PocketSphinxOptions configure NewPocketSphinx. Zero fields take the defaults noted beside them.
type PocketSphinxOptions struct {
	// Program is pocketsphinx_continuous (the default, Debian's pocketsphinx package).
	Program string
	// Threshold is the keyword's detection threshold, -kws_threshold (default 1e-20): lower
	// hears the keyword more often, falsely too.
	Threshold float64
	Logger    *slog.Logger
}

// PocketSphinx spots a keyword with pocketsphinx's keyword search (-keyphrase), fed the
// microphone's audio on its stdin. It prints the keyphrase each time it ends an utterance that
// held it.
type PocketSphinx struct {
	keyword string
	log     *slog.Logger
	cmd     *exec.Cmd
	cancel  context.CancelFunc
	audio   chan []byte // to the writer goroutine; full: frames are dropped
	spotted chan struct{}
	stderr  *stderrtail.Buffer
	wg      sync.WaitGroup
	once    sync.Once
}

var _ Spotter = (*PocketSphinx)(nil)

// spotterQueue is how many frames wait for pocketsphinx: 2 s; past that it is too far behind for
// a keyword to matter and frames are dropped.
const spotterQueue = 100

// NewPocketSphinx starts pocketsphinx listening for keyword. A keyword with a word outside
// pocketsphinx's dictionary fails here, with pocketsphinx's own message.
func NewPocketSphinx(keyword string, opts *PocketSphinxOptions) (*PocketSphinx, error) {
	var o PocketSphinxOptions
	if opts != nil {
		o = *opts
	}
	if o.Program == "" {
		o.Program = "pocketsphinx_continuous"
	}
	if o.Threshold == 0 {
		o.Threshold = 1e-20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	keyword = strings.ToLower(strings.Join(strings.Fields(keyword), " "))
	if keyword == "" {
		return nil, errors.New("voice: no wake word")
	}
	path, err := exec.LookPath(o.Program)
	if err != nil {
		return nil, fmt.Errorf("voice: the wake word needs pocketsphinx (apt install pocketsphinx pocketsphinx-en-us): %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, "-infile", "/dev/stdin", "-keyphrase", keyword,
		"-kws_threshold", fmt.Sprintf("%g", o.Threshold), "-logfn", "/dev/null")
	procgroup.KillGroup(cmd)
	cmd.WaitDelay = time.Second
	p := &PocketSphinx{keyword: keyword, log: o.Logger.With("component", "wake-word"), cmd: cmd, cancel: cancel,
		audio: make(chan []byte, spotterQueue), spotted: make(chan struct{}, 1), stderr: &stderrtail.Buffer{Max: 512}}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("voice: pocketsphinx: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("voice: pocketsphinx: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("voice: starting pocketsphinx: %w", err)
	}
	p.wg.Add(2)
	go func() { // the writer: frames to pocketsphinx
		defer p.wg.Done()
		defer stdin.Close()
		for {
			select {
			case b := <-p.audio:
				if _, err := stdin.Write(b); err != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { // the reader: a line for each keyword heard, until pocketsphinx exits
		defer p.wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(strings.ToLower(sc.Text()), keyword) {
				select {
				case p.spotted <- struct{}{}:
				default: // one pending is as good as two
				}
			}
		}
		err := cmd.Wait()
		if ctx.Err() == nil {
			p.log.Warn("pocketsphinx stopped: the wake word is no longer heard", "err", err, "stderr", p.stderr.String())
		}
	}()
	return p, nil
}

// String returns "pocketsphinx(KEYWORD)".
func (p *PocketSphinx) String() string { return "pocketsphinx(" + p.keyword + ")" }

// Feed hands pocketsphinx the next frame, or drops it when pocketsphinx is behind.
func (p *PocketSphinx) Feed(frame []int16) {
	b := make([]byte, 2*len(frame))
	for i, s := range frame {
		b[2*i], b[2*i+1] = byte(s), byte(uint16(s)>>8) // little-endian
	}
	select {
	case p.audio <- b:
	default:
	}
}

// Spotted delivers a value each time the keyword was heard.
func (p *PocketSphinx) Spotted() <-chan struct{} { return p.spotted }

// Close stops pocketsphinx and waits for it and its goroutines.
func (p *PocketSphinx) Close() error {
	p.once.Do(func() {
		p.cancel()
		p.wg.Wait()
	})
	return nil
}
