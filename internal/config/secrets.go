package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/safefile"
)

// This file resolves what the values point at: the device's MAC, its credentials and its state.

// TokenEnv is the environment variable read for the bearer token when server.token_file is unset.
const TokenEnv = "DEVICECTL_TOKEN"

// systemStateDir is where a packaged device keeps its state (systemd's StateDirectory=devicectl).
const systemStateDir = "/var/lib/devicectl"

// DeviceMAC returns the configured MAC, else the one of the configured or first usable interface.
func DeviceMAC(c DeviceConfig) (string, error) {
	if c.MAC != "" {
		return c.MAC, nil // normalised when parsed
	}
	mac, err := device.DetectMAC(c.Interface)
	if err != nil {
		return "", fmt.Errorf("finding the device's MAC address (set device.mac or --mac): %w", err)
	}
	return mac, nil
}

// LoadToken returns the bearer token: the content of server.token_file when set, else the
// DEVICECTL_TOKEN environment variable, else "" (no Authorization header). The token is never
// logged; only where it came from is. A token no HTTP header can carry is an error naming where
// it came from: every connect would fail with it.
func LoadToken(c ServerConfig, getenv func(string) string, log *slog.Logger) (string, error) {
	if c.TokenFile == "" {
		token := strings.TrimSpace(getenv(TokenEnv))
		if err := checkToken(token); err != nil {
			return "", &Error{Key: "$" + TokenEnv, Err: err}
		}
		return token, nil
	}
	if getenv(TokenEnv) != "" {
		log.Warn("both server.token_file and " + TokenEnv + " are set; using server.token_file")
	}
	return ReadToken("server.token_file", c.TokenFile, log)
}

// MaxSecretSize is the largest secret file read. A secret is short; the cap keeps a wrong path
// (a log, a disk image) harmless.
const MaxSecretSize = 64 << 10

// ReadSecret reads the secret in the file path that the config key names: a token, an API key,
// or a file of keys one per line. path must be a regular file of at most MaxSecretSize bytes, and
// hold only what an HTTP header value may carry, besides line breaks: a FIFO, a device such as
// /dev/zero or a file of control bytes is refused with an *Error naming the key and the file. A
// file others can read is worth a warning, not a refusal: the device still has to work.
func ReadSecret(key, path string, log *slog.Logger) (string, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return "", &Error{Key: key, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", &Error{Key: key, Err: err}
	}
	if LooseMode(fi.Mode()) {
		log.Warn("secret file is readable by group or others; chmod 600 it", "key", key, "file", path, "mode", fi.Mode().Perm().String())
	}
	b, err := safefile.ReadAll(f, path, MaxSecretSize)
	if err != nil {
		return "", &Error{Key: key, Err: err}
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return "", &Error{Key: key, Err: fmt.Errorf("%s is empty", path)}
	}
	for line, text := range strings.Split(secret, "\n") {
		if err := checkToken(strings.TrimSuffix(text, "\r")); err != nil {
			return "", &Error{Key: key, Err: fmt.Errorf("%s line %d: %w", path, line+1, err)}
		}
	}
	return secret, nil
}

// ReadToken is ReadSecret for a file that holds one token, sent whole in a header: a second line
// is an error too.
func ReadToken(key, path string, log *slog.Logger) (string, error) {
	token, err := ReadSecret(key, path, log)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", &Error{Key: key, Err: fmt.Errorf("%s holds more than one line; want the token alone", path)}
	}
	return token, nil
}

// checkToken refuses what no HTTP header value may carry (RFC 9110 field-value): control bytes
// other than tab, and DEL. The byte is named by its offset, not shown: it is part of a secret.
func checkToken(s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("byte %d is 0x%02x, which no HTTP header may carry", i+1, c)
		}
	}
	return nil
}

// LooseMode reports whether a secret file's mode lets others than its owner read it.
func LooseMode(m os.FileMode) bool { return m.Perm()&0o044 != 0 }

// StateDirs lists where the state may live, best first: the configured directory alone, else the
// system directory, then the user's ($XDG_STATE_HOME or ~/.local/state).
func StateDirs(c DeviceConfig, getenv func(string) string) []string {
	if c.StateDir != "" {
		return []string{c.StateDir}
	}
	dirs := []string{systemStateDir}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		dirs = append(dirs, filepath.Join(x, "devicectl"))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "state", "devicectl"))
	}
	return dirs
}

// writableDir returns the first of dirs that exists or can be made, and can be written to.
func writableDir(dirs []string) (string, error) {
	var errs []error
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			errs = append(errs, err)
			continue
		}
		f, err := os.CreateTemp(dir, ".probe-*")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f.Close()
		os.Remove(f.Name())
		return dir, nil
	}
	return "", fmt.Errorf("no writable state directory: %w", errors.Join(errs...))
}

// ClientID returns the installation's persistent Client-Id. A configured device.state_dir that
// cannot hold it is an error; when the directory is chosen automatically and none is writable, the
// device runs without a Client-Id (the protocol does not require one) and says so.
func ClientID(c DeviceConfig, getenv func(string) string, log *slog.Logger) (string, error) {
	if c.StateDir != "" {
		id, err := device.LoadClientID(c.StateDir)
		if err != nil {
			return "", &Error{Key: "device.state_dir", Err: err}
		}
		return id, nil
	}
	dirs := StateDirs(c, getenv)
	dir, err := writableDir(dirs)
	if err != nil {
		log.Warn("no state directory; connecting without a Client-Id", "tried", strings.Join(dirs, ", "), "err", err)
		return "", nil
	}
	id, err := device.LoadClientID(dir)
	if err != nil {
		log.Warn("cannot keep a Client-Id; connecting without one", "dir", dir, "err", err)
		return "", nil
	}
	return id, nil
}
