package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	samples := []int16{0, 1, -1, 32767, -32768, 1234}
	var b bytes.Buffer
	if err := Encode(&b, Format{Rate: 16000, Channels: 1}, samples); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 44+12 {
		t.Errorf("%d bytes, want 56", b.Len())
	}
	r, err := NewReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadAll()
	if err != nil || !slices.Equal(got, samples) || r.Rate != 16000 || r.Channels != 1 {
		t.Errorf("read %v (%+v), %v; want %v", got, r.Format, err, samples)
	}
}

// A chunk before fmt (LIST, as sox and ffmpeg write) is skipped; a streamed data size (all
// ones) reads to the end of the file.
func TestChunksAndStreamedSize(t *testing.T) {
	var b bytes.Buffer
	Encode(&b, Format{Rate: 8000, Channels: 2}, []int16{5, 6, 7, 8})
	raw := b.Bytes()
	list := append([]byte("LIST"), 3, 0, 0, 0, 'a', 'b', 'c', 0)
	doc := slices.Concat(raw[:12], list, raw[12:])
	binary.LittleEndian.PutUint32(doc[40+len(list):], 0xFFFFFFFF)
	r, err := NewReader(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadAll()
	if err != nil || !slices.Equal(got, []int16{5, 6, 7, 8}) || r.Channels != 2 || r.Rate != 8000 {
		t.Errorf("read %v (%+v), %v", got, r.Format, err)
	}
}

func TestRefuses(t *testing.T) {
	var b bytes.Buffer
	Encode(&b, Format{Rate: 16000, Channels: 1}, []int16{1})
	eightBit := slices.Clone(b.Bytes())
	binary.LittleEndian.PutUint16(eightBit[34:], 8)
	float := slices.Clone(b.Bytes())
	binary.LittleEndian.PutUint16(float[20:], 3)
	for name, doc := range map[string][]byte{
		"empty": nil, "text": []byte("hello, this is not a wav file at all"),
		"8-bit": eightBit, "float": float, "no data": b.Bytes()[:36],
	} {
		if _, err := NewReader(bytes.NewReader(doc)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

func FuzzReader(f *testing.F) {
	var b bytes.Buffer
	Encode(&b, Format{Rate: 16000, Channels: 1}, []int16{1, 2, 3})
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := NewReader(bytes.NewReader(doc))
		if err != nil {
			return
		}
		if _, err := r.ReadAll(); err != nil {
			t.Fatalf("ReadAll after a good header: %v", err)
		}
	})
}
