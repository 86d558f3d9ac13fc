package mic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/sleep"
	"github.com/devicectl/devicectl/internal/wav"
)

// FileOptions configure OpenFile. The zero value reads as fast as the reader asks and ends with
// io.EOF.
type FileOptions struct {
	// Realtime delivers the samples no faster than they would be spoken, as a microphone does.
	Realtime bool
	// ThenSilence goes on with silence after the file, instead of io.EOF: a microphone that
	// hears a recording and then a quiet room.
	ThenSilence bool
}

// File is a microphone that plays a WAV file (16 kHz mono 16-bit PCM) in: for demos, tests and
// `sim --voice-input`.
type File struct {
	name string
	opts FileOptions
	f    *os.File

	mu      sync.Mutex
	r       *wav.Reader
	ended   bool
	start   time.Time // when the first sample was read, for Realtime
	read    int64     // samples delivered so far
	halted  bool
	stopped chan struct{} // closed by Halt: a Realtime wait ends
	once    sync.Once
}

var _ hal.Microphone = (*File)(nil)

// OpenFile opens path. A file that is not 16 kHz mono 16-bit PCM is refused here, saying how to
// convert it.
func OpenFile(path string, opts *FileOptions) (*File, error) {
	var o FileOptions
	if opts != nil {
		o = *opts
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mic file: %w", err)
	}
	r, err := wav.NewReader(f)
	if err == nil && (r.Rate != hal.SampleRate || r.Channels != 1) {
		err = fmt.Errorf("%d Hz, %d channels", r.Rate, r.Channels)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mic file %s: %w; want 16 kHz mono 16-bit PCM (sox IN -r 16000 -c 1 -b 16 OUT.wav converts)", path, err)
	}
	return &File{name: "file:" + path, opts: o, f: f, r: r, stopped: make(chan struct{})}, nil
}

// String returns "file:" and the path.
func (m *File) String() string { return m.name }

// Read fills p with the file's next samples, then with silence or io.EOF.
func (m *File) Read(ctx context.Context, p []int16) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.halted {
		return 0, fmt.Errorf("%s: %w", m.name, hal.ErrHalted)
	}
	if m.opts.Realtime {
		if err := m.pace(ctx, len(p)); err != nil {
			return 0, err
		}
	}
	n := 0
	for n < len(p) && !m.ended {
		k, err := m.r.Read(p[n:])
		n += k
		if errors.Is(err, io.EOF) {
			m.ended = true
			m.f.Close()
			break
		}
		if err != nil {
			return n, fmt.Errorf("%s: %w", m.name, err)
		}
	}
	if m.ended && n < len(p) {
		if !m.opts.ThenSilence {
			m.read += int64(n)
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
		clear(p[n:])
		n = len(p)
	}
	m.read += int64(n)
	return n, nil
}

// pace waits until the next n samples would have been spoken.
func (m *File) pace(ctx context.Context, n int) error {
	if m.start.IsZero() {
		m.start = time.Now()
	}
	due := m.start.Add(time.Duration(m.read+int64(n)) * time.Second / hal.SampleRate)
	wait := time.Until(due)
	if wait <= 0 {
		return nil
	}
	err := sleep.ForOrStop(ctx, wait, m.stopped)
	if errors.Is(err, sleep.ErrStopped) {
		return fmt.Errorf("%s: %w", m.name, hal.ErrHalted)
	}
	return err
}

// Halt stops the playback; Read then fails with hal.ErrHalted.
func (m *File) Halt() error {
	m.once.Do(func() { close(m.stopped) })
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.halted {
		m.halted = true
		if !m.ended {
			m.f.Close()
		}
	}
	return nil
}
