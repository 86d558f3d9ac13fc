// Package wav reads and writes the WAV files voice input deals in: 16-bit PCM, the format a
// microphone file, a speech-to-text program's input and a test recording share.
package wav

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Format is a WAV file's audio format.
type Format struct {
	Rate     int // samples per second per channel
	Channels int
}

// Encode writes samples (interleaved when Channels > 1) as a 16-bit PCM WAV file.
func Encode(w io.Writer, f Format, samples []int16) error {
	if f.Rate <= 0 || f.Channels <= 0 {
		return fmt.Errorf("wav: bad format %+v", f)
	}
	data := len(samples) * 2
	h := make([]byte, 44, 44+data)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+data))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], uint16(f.Channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(f.Rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(f.Rate*f.Channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(f.Channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	for _, s := range samples {
		h = binary.LittleEndian.AppendUint16(h, uint16(s))
	}
	_, err := w.Write(h)
	return err
}

// ErrFormat reports a file that is not a 16-bit PCM WAV.
var ErrFormat = errors.New("wav: not a 16-bit PCM WAV file")

// Reader reads the samples of a 16-bit PCM WAV file, interleaved when it has several channels.
type Reader struct {
	Format
	r    io.Reader
	left int64 // bytes of the data chunk not yet read
	buf  []byte
}

// NewReader reads r's header up to the start of its samples.
func NewReader(r io.Reader) (*Reader, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%w: no RIFF/WAVE header", ErrFormat)
	}
	wr := &Reader{r: r}
	var haveFmt bool
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return nil, fmt.Errorf("%w: no data chunk: %w", ErrFormat, err)
		}
		id, size := string(ch[0:4]), int64(binary.LittleEndian.Uint32(ch[4:]))
		switch id {
		case "fmt ":
			if size < 16 || size > 1<<16 {
				return nil, fmt.Errorf("%w: fmt chunk of %d bytes", ErrFormat, size)
			}
			b := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrFormat, err)
			}
			tag, bits := binary.LittleEndian.Uint16(b[0:]), binary.LittleEndian.Uint16(b[14:])
			// 0xFFFE is WAVE_FORMAT_EXTENSIBLE; its subformat's first two bytes are the tag.
			if tag == 0xFFFE && size >= 26 {
				tag = binary.LittleEndian.Uint16(b[24:])
			}
			if tag != 1 || bits != 16 {
				return nil, fmt.Errorf("%w: format tag %d, %d bits per sample", ErrFormat, tag, bits)
			}
			wr.Channels = int(binary.LittleEndian.Uint16(b[2:]))
			wr.Rate = int(binary.LittleEndian.Uint32(b[4:]))
			if wr.Channels < 1 || wr.Rate < 1 {
				return nil, fmt.Errorf("%w: %d channels at %d Hz", ErrFormat, wr.Channels, wr.Rate)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, fmt.Errorf("%w: data before fmt", ErrFormat)
			}
			// Streaming writers (sox to a pipe) leave the size at its maximum: read to the end.
			wr.left = size
			if size == 0xFFFFFFFF || size == 0 {
				wr.left = 1<<63 - 1
			}
			return wr, nil
		default:
			if _, err := io.CopyN(io.Discard, r, size+size%2); err != nil {
				return nil, fmt.Errorf("%w: chunk %q: %w", ErrFormat, id, err)
			}
		}
	}
}

// Read reads up to len(p) samples; io.EOF after the last.
func (r *Reader) Read(p []int16) (int, error) {
	if r.left < 2 {
		return 0, io.EOF
	}
	want := min(int64(len(p))*2, r.left&^1)
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	b := r.buf[:want]
	n, err := io.ReadFull(r.r, b)
	n &^= 1
	for i := 0; i < n/2; i++ {
		p[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	r.left -= int64(n)
	if errors.Is(err, io.ErrUnexpectedEOF) || (errors.Is(err, io.EOF) && n > 0) {
		r.left, err = 0, nil
	}
	return n / 2, err
}

// ReadAll reads every remaining sample.
func (r *Reader) ReadAll() ([]int16, error) {
	var all []int16
	buf := make([]int16, 4096)
	for {
		n, err := r.Read(buf)
		all = append(all, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return all, nil
		}
		if err != nil {
			return all, err
		}
	}
}
