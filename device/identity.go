package device

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/devicectl/devicectl/protocol"
)

// DetectMAC returns the hardware address of the named interface or, when iface is empty, of the
// first interface that is up, is not a loopback, and has a 48-bit hardware address.
func DetectMAC(iface string) (string, error) {
	if iface != "" {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return "", fmt.Errorf("network interface %q: %w", iface, err)
		}
		if len(ifi.HardwareAddr) != 6 {
			return "", fmt.Errorf("network interface %q has no 48-bit hardware address", iface)
		}
		return protocol.FormatMAC(ifi.HardwareAddr), nil
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("listing network interfaces: %w", err)
	}
	for _, ifi := range ifaces {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagLoopback != 0 || len(ifi.HardwareAddr) != 6 {
			continue
		}
		return protocol.FormatMAC(ifi.HardwareAddr), nil
	}
	return "", errors.New("no network interface that is up and has a hardware address; set device.mac")
}

// clientIDFile is the file under the state directory that keeps the device's Client-Id across
// restarts, so the server sees the same installation after every reconnect and reboot.
const clientIDFile = "client-id"

// LoadClientID returns the UUID kept in stateDir, creating the directory and a fresh random (version
// 4) UUID on first use.
func LoadClientID(stateDir string) (string, error) {
	path := filepath.Join(stateDir, clientIDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if !validUUID(id) {
			return "", fmt.Errorf("%s: not a UUID; delete the file to get a new one", path)
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("reading client id: %w", err)
	}
	id, err := newUUID()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(stateDir, 0o750); err != nil {
		return "", fmt.Errorf("creating state directory: %w", err)
	}
	// Write to a temporary name and rename so a power cut never leaves a half-written id behind.
	tmp, err := os.CreateTemp(stateDir, clientIDFile+".*")
	if err != nil {
		return "", fmt.Errorf("writing client id: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(id + "\n"); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing client id: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing client id: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing client id: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("writing client id: %w", err)
	}
	return id, nil
}

func newUUID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", fmt.Errorf("generating client id: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}
