//go:build !devicectl_omit_sim

package main

import (
	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/simsession"
)

// simWebAddr is where `sim --web` serves the page without an address: loopback, next to serve's
// default port so that both can run at once.
const simWebAddr = "127.0.0.1:8766"

func newSimCmd() *cobra.Command {
	var webAddr, configPath string
	var sv simsession.Voice
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the agent server and a simulated device in one process, and talk to them",
		Long: `sim needs no configuration, no server and no hardware: it starts the agent server (as serve
runs it) and a device with simulated hardware (a speaker and a face) in one process, connected
over loopback exactly as a real device is to a real server, and gives you a console to talk to
the agent (the built-in rule planner unless --planner llm) and to drive the device yourself.
The agent's memories last as long as the session.

In a terminal the console is interactive and shows the face and a volume bar as they change.
Otherwise it runs the lines of its input in order, printing each after the prompt, and exits 0
at the end (with --web it then serves the page until interrupted).

--web serves a web page showing the device's face, volume and uptime, a conversation box and the
log of tool calls, at http://` + simWebAddr + `/ or the loopback address given (--web=127.0.0.1:9000).

--voice makes the device hear and speak: it listens on the laptop's default PulseAudio source
(every utterance, as voice.listen vad), the agent server transcribes what it heard (agent.stt:
pocketsphinx with a grammar of what the planner understands, where installed), the console
shows what was heard, and the replies are spoken through the speakers (espeak-ng).
--voice-input FILE.wav plays a 16 kHz mono WAV in as the microphone instead, for demos and
tests (sox IN -r 16000 -c 1 -b 16 FILE.wav converts).

--config reads a config file's agent, llm, render and log sections (a search backend, a planner,
its model); the device stays simulated and the agent's database lasts the session, whatever the
file says about them.

` + simsession.Help,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := simsession.Defaults()
			if configPath != "" {
				if err := config.LoadFile(configPath, c); err != nil {
					return err
				}
			}
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			if cmd.Flags().Changed("web") {
				// The page is on the agent server's own address, which the sim's device dials
				// too; without a token CheckAgent keeps it on loopback.
				c.Agent.Web, c.Agent.Listen = true, webAddr
			}
			if err := c.CheckAgent(); err != nil {
				return err
			}
			return simsession.Run(cmd.Context(), &simsession.Options{Config: c, Voice: sv, Version: buildVersion(),
				In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file whose agent, llm, render and log sections to use (none by default: sim needs no configuration)")
	config.BindFlags(cmd.Flags(), simsession.Defaults(), "mac", "language", "planner", "llm-url", "llm-model", "searxng-url", "show-thoughts", "color", "log-level", "log-format")
	cmd.Flags().StringVar(&webAddr, "web", "", "serve the web page at http://ADDR/ (a loopback host:port; --web alone: "+simWebAddr+")")
	cmd.Flags().Lookup("web").NoOptDefVal = simWebAddr
	cmd.Flags().BoolVar(&sv.On, "voice", false, "hear the laptop's default PulseAudio source and speak the replies through its speakers")
	cmd.Flags().StringVar(&sv.File, "voice-input", "", "hear this WAV file (16 kHz mono 16-bit) as the microphone, and speak the replies")
	// The simulated device has no network interface to take a MAC from: run's text for --mac,
	// which falls back to device.interface, does not apply.
	cmd.Flags().Lookup("mac").Usage = "the simulated device's MAC address, sent in mcp/registerTools (device.mac)"
	return cmd
}
