package main

// This file keeps the names the other commands used before the configuration, the hardware and
// the daemon moved to internal/config, internal/hardware (imported as devhw: the name hardware is
// still the type here) and internal/daemon. Each is a thin
// wrapper or an alias; a command file that uses the packages directly needs none of them.

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/driverreg"
	"github.com/devicectl/devicectl/hal/hostbus"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/daemon"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/tools"
)

type (
	Config        = config.Config
	ConfigError   = config.Error
	ServerConfig  = config.ServerConfig
	SpeakerConfig = config.SpeakerConfig
	FaceConfig    = config.FaceConfig
	hardware      = devhw.Hardware
	simHooks      = devhw.SimHooks
	agentSettings = config.AgentSettings
)

const (
	defaultConfigPath = config.DefaultPath
	tokenEnv          = config.TokenEnv
)

func Defaults() *Config { return config.Defaults() }

func bindFlags(fs *pflag.FlagSet, defaults *Config, names ...string) {
	config.BindFlags(fs, defaults, names...)
}

func resolveConfig(path string, fs *pflag.FlagSet) (*Config, error) { return config.Resolve(path, fs) }

func newLogger(c config.LogConfig, w io.Writer) *slog.Logger { return config.NewLogger(c, w) }

func loadToken(c ServerConfig, getenv func(string) string, log *slog.Logger) (string, error) {
	return config.LoadToken(c, getenv, log)
}

func tlsConfig(c ServerConfig, log *slog.Logger) (*tls.Config, error) {
	return config.TLSConfig(c, log)
}

func deviceMAC(c config.DeviceConfig) (string, error) { return config.DeviceMAC(c) }

func colorOn(mode string, w io.Writer) bool { return config.RenderConfig{Color: mode}.ColorOn(w) }

func isTerminal(v any) bool { return term.IsTerminal(v) }

func simHardware(hooks *simHooks) *hardware { return devhw.Sim(hooks) }

// newRegistry checks the timeouts of a Config built in code, as the file's are when parsed.
func newRegistry(hw *hardware, c *Config, connState func() string) (*tools.Registry, error) {
	if err := config.CheckToolTimeouts(c); err != nil {
		return nil, err
	}
	return devhw.NewRegistry(hw, c, buildVersion(), connState)
}

func agentOptions(c *Config, s agentSettings) *device.Options {
	if s.Version == "" {
		s.Version = buildVersion()
	}
	return c.AgentOptions(s)
}

// buses are the host's buses for doctor's checks.
type buses struct{ hostbus.Buses }

func (b *buses) close() error { return b.Close() }

func openSpeaker(ctx context.Context, c SpeakerConfig, b *buses, keepLevel bool, log *slog.Logger) (hal.Speaker, error) {
	return devhw.OpenSpeaker(ctx, c, &driverreg.Env{Buses: &b.Buses, Logger: log}, keepLevel)
}

func openFace(ctx context.Context, c FaceConfig, b *buses, log *slog.Logger) (hal.Face, error) {
	return devhw.OpenFace(ctx, c, &driverreg.Env{Buses: &b.Buses, Logger: log})
}

func openSpeech(c config.SpeechConfig, lang string, log *slog.Logger) (devhw.Speech, error) {
	return devhw.OpenSpeech(c, lang, log)
}

func loadToolSetsOnce(ctx context.Context, c *Config, log *slog.Logger) ([]*tools.Tool, error) {
	return daemon.LoadToolSets(ctx, c, buildVersion(), log)
}

func addToolSets(reg *tools.Registry, extra []*tools.Tool, log *slog.Logger) {
	daemon.AddToolSets(reg, extra, log)
}

func applyFlags(fs *pflag.FlagSet, c *Config) error { return config.ApplyFlags(fs, c) }

func looseMode(m os.FileMode) bool { return config.LooseMode(m) }

// logHandler is the handler c asks for on w (stderr), writing through redact.
func logHandler(c config.LogConfig, redact io.Writer, w io.Writer) slog.Handler {
	return logging.NewHandler(redact, config.LogOptions(c, w))
}

// settings is config.Keys in the shape the README's table test reads.
var settings = func() []setting {
	var out []setting
	for _, k := range config.Keys(config.Defaults()) {
		s := setting{key: k.Name, flag: k.Flag, usage: k.Usage, def: k.Default}
		s.get = func(*Config) string { return s.def }
		if len(k.Items) > 0 {
			items := k.Items
			s.rows = func() []itemRow {
				rows := make([]itemRow, len(items))
				for i, it := range items {
					rows[i] = itemRow{it.Name, it.Default, it.Usage}
				}
				return rows
			}
		}
		out = append(out, s)
	}
	return out
}()

type setting struct {
	key, flag, usage, def string
	get                   func(*Config) string
	rows                  func() []itemRow
}

type itemRow struct{ key, def, usage string }
