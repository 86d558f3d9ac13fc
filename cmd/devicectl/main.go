// Command devicectl turns a Linux board into a tool-using peripheral of an AI agent server: it
// dials the server over WebSocket, registers the device's tools, runs the server's calls on the
// hardware and renders the server's messages. See README.md for the commands and the config file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	// The hardware drivers, registered for the commands that open parts by their configured
	// names (run, doctor, tools, call): a program picks its drivers, as with periph's
	// host, and a package that only reads the config links none.
	_ "github.com/devicectl/devicectl/hal/drivers"
	"github.com/devicectl/devicectl/internal/completion"
	"github.com/devicectl/devicectl/internal/config"
)

func main() { os.Exit(run()) }

// run is main with an exit code, so deferred work is done before the process exits.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, restore the default handling: a second Ctrl-C during the drain
	// kills the process instead of being swallowed.
	context.AfterFunc(ctx, stop)
	return execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command failed
	exitUsage = 2 // a bad flag, argument or config value
)

// execute runs the command line args with the given standard streams and returns the exit code.
// Tests call it in-process.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// After SetOut: cobra's completion command keeps the writer it finds.
	completion.SetUp(root, completeToolNames, func(err error) error { return usageError{err} })
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var quiet *quietError
	if errors.As(err, &quiet) {
		return quiet.code // the command has said what went wrong
	}
	fmt.Fprintf(stderr, "devicectl: %v\n", err)
	if isUsage(err) {
		return exitUsage
	}
	return exitError
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "devicectl",
		Short: "Connect a device's tools to an AI agent server",
		Long: `devicectl turns a Linux board into a tool-using peripheral of an AI agent server. It dials the
server over WebSocket, registers the device's tools (mcp/registerTools) with its MAC address,
runs the server's mcp/tool/execute calls on the hardware and renders its mcp/ai/message replies.

Try it on a laptop, with no server and no hardware: devicectl sim`,
		SilenceErrors: true, // execute prints errors once, in one format
		SilenceUsage:  true,
		Args:          noArgs,
		// cobra's default, which SuggestionsFor only applies when set.
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newSimCmd(), newServeCmd(), newSwarmCmd(), newToolsCmd(), newCallCmd(), newDoctorCmd(), newVersionCmd())
	root.AddCommand(newMCPCmd())
	return root
}

// usageError marks a bad command line: devicectl exits 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// isUsage reports whether err is the user's to fix on the command line or in the config file.
func isUsage(err error) bool {
	var u usageError
	var c *config.Error
	return errors.As(err, &u) || errors.As(err, &c)
}

// quietError is an exit code for a failure the command has already reported on its own terms,
// e.g. `devicectl call` printing the tool's JSON-RPC error.
type quietError struct{ code int }

func (e *quietError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// noArgs and argsBetween are cobra.NoArgs and cobra.RangeArgs whose errors exit 2.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return usageError{errors.New(msg)}
		}
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

func argsBetween(lo, hi int, usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usageError{fmt.Errorf("usage: %s %s", cmd.CommandPath(), usage)}
		}
		return nil
	}
}
