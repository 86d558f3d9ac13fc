// Package noshell holds one test of the whole module's source: no program is started through a
// shell, and every program started whose name is not a literal was reviewed and shown to come
// from the configuration, never from the server. docs/design.md: "no tool passes server input to a
// shell". It has no code of its own; the test reads the other packages' files.
package noshell

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/modroot"
)

// reviewed are the places that start a program named by an expression rather than a literal,
// keyed by "file:function:expression", each with where the program comes from. A new such place
// fails the test until someone has traced its program and added it here; an entry that no
// longer matches anything fails too, so the list stays true.
var reviewed = map[string]string{
	"hal/command/command.go:(*Face).run:f.path": "f.path is exec.LookPath(argv[0]) in New, argv being hardware.face.command " +
		"(hal/command/driver.go). The only server input, the expression, is appended as one argument after Valid() " +
		"limits it to the six names.",
	"hooks/run.go:(*Runner).run:h.path": "h.path is exec.LookPath(argv[0]) in New, argv being a hooks.<event> list " +
		"from the config. Server input reaches the hook only in DEVICECTL_* variables and on stdin, never in argv.",
	"speech/speaker.go:(*Speaker).say:s.path": "s.path is exec.LookPath(argv[0]) in NewSpeaker, argv being " +
		"hardware.speech.command or DefaultCommand's espeak-ng. The reply text goes to stdin only.",
	"internal/mixerexec/run.go:Run:command": "command is Run's parameter; Run is itself a checked sink " +
		"(sinks below), so each of its callers is reviewed for it.",
	"hal/alsa/alsa.go:(*control).amixer:c.command": "c.command is Options.Command, default \"amixer\"; devicectl " +
		"never sets it (only tests do, with a fake). Arguments: hardware.speaker.device and control, and the volume as a number.",
	"hal/pulse/pulse.go:(*sink).run:k.command": "k.command is Options.Command (devicectl never sets it), default Options.Tool, which " +
		"New limits to pactl or wpctl (hardware.speaker.tool). Arguments: hardware.speaker.device and the volume as a number.",
	"internal/testing/pulsetest/pulsetest.go:Run:program": "a test helper: program is the amixer or pactl path Need found, " +
		"run to look at or change the private daemon's mixer behind the backend's back.",
	"internal/testing/flite/flite.go:Say:flite": "a test helper: flite is pulsetest.Need's path of flite; the text and the " +
		"voice are the test's own, one argument each.",
	"internal/testing/flite/flite.go:Say:sox": "a test helper: sox is pulsetest.Need's path of sox, resampling the file " +
		"flite wrote in the test's directory.",
	"internal/testing/pulsetest/pulsetest.go:Start:bin": "a test helper: bin is exec.LookPath(\"pulseaudio\").",
	"internal/testing/serveproc/serveproc.go:start:bin": "a test helper: bin is the devicectl binary the test built.",
	"internal/testing/a2ajs/a2ajs.go:(*Clients).Run:cl.node": "a test helper: cl.node is exec.LookPath(\"node\"), " +
		"running the @a2a-js/sdk clients' check.mjs against a server the test started.",
	"internal/testing/serveproc/serveproc.go:RunWith:bin": "a test helper: bin is the devicectl binary the test built, run with " +
		"the `run` command line and environment the test gives.",
	"internal/testing/mcpinspector/mcpinspector.go:(*CLI).Run:c.npx": "a test helper: c.npx is exec.LookPath(\"npx\") " +
		"(Find), running the MCP Inspector installed in the tree with the test's arguments.",
	"internal/testing/serveproc/serveproc.go:Build:gobin": "a test helper: the go command " +
		"($GO, else go on PATH) building devicectl for the test.",
	"internal/testing/pgtest/pgtest.go:start:filepath.Join(bin, \"postgres\")": "a test helper: bin is binDir(), the directory " +
		"of postgres on PATH or Debian's /usr/lib/postgresql/VERSION/bin; the arguments are fixed but for its temporary directory.",
	"internal/testing/pgtest/pgtest.go:(*server).run:program": "a test helper: program is initdb in binDir() (see start), its " +
		"arguments fixed but for its temporary directory.",
	"hal/mic/pipe.go:Start:path": "path is exec.LookPath(argv[0]), argv being parec's or arecord's fixed argv (PulseCommand, " +
		"ALSACommand: hardware.microphone.device as one argument) or hardware.microphone.command. The server sends nothing to it.",
	"voice/spotter.go:NewPocketSphinx:path": "path is exec.LookPath(o.Program), pocketsphinx_continuous unless a test names another; " +
		"the keyword is voice.wake_word from the config, one argument. Audio goes to stdin.",
	"agent/stt/command.go:(*Command).Transcribe:argv[0]": "argv is agent.stt.command from the config (or the packaged " +
		"pocketsphinx_continuous argv), with its {wav} and {jsgf} placeholders replaced by files the server wrote. The " +
		"device's audio reaches the program only as a WAV on stdin or in that file.",
	"voice/stt.go:(*CommandSTT).Transcribe:c.Argv[0]": "c.Argv is voice.stt_command from the config. The utterance goes to stdin " +
		"as a WAV; the server sends nothing to it.",
	"tools/mcpset/conn.go:(*Set).connect:s.path": "s.path is exec.LookPath(Command[0]) in New, Command being toolsets.mcp[].command " +
		"from the config. Server input reaches the program only as MCP messages on its stdin, never in argv.",
}

// shells are programs that run their arguments as a script.
var shells = []string{"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "busybox",
	"cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh"}

// sinks are the functions that start a program, by import path and name, with the index of the
// argument that names the program. internal/mixerexec.Run is here because it passes its command
// parameter on to exec.CommandContext: its callers' programs are checked where they are chosen.
var sinks = map[string]map[string]int{
	"os/exec":                          {"Command": 0, "CommandContext": 1},
	"os":                               {"StartProcess": 0},
	"syscall":                          {"Exec": 0, "ForkExec": 0, "StartProcess": 0},
	"golang.org/x/sys/unix":            {"Exec": 0},
	modulePath + "/internal/mixerexec": {"Run": 3},
}

const modulePath = "github.com/devicectl/devicectl"

// finding is a place that starts a program in a way not shown to be safe.
type finding struct {
	pos  token.Position
	what string
}

func (f finding) String() string { return f.pos.String() + ": " + f.what }

// check inspects the file f, whose path in the module is rel. It returns what is wrong and the
// keys of reviewed that it matched.
func check(fset *token.FileSet, f *ast.File, rel string, reviewed map[string]string) (findings []finding, matched []string) {
	// The local name of each sink package this file imports.
	local := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || sinks[p] == nil {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "_" {
			continue
		}
		local[name] = p // "." for a dot import
	}
	if len(local) == 0 {
		return nil, nil
	}

	// program reports on the expression that names the program of a call in function fn.
	program := func(fn string, prog ast.Expr, args []ast.Expr) {
		at := fset.Position(prog.Pos())
		lit, isLit := literal(prog)
		switch {
		case isLit && isShell(lit):
			findings = append(findings, finding{at, "starts the shell " + strconv.Quote(lit)})
		case isLit && strings.HasSuffix(path.Base(lit), "sh") && hasDashC(args):
			findings = append(findings, finding{at, "starts " + strconv.Quote(lit) + " with -c, as a shell"})
		case isLit:
		default:
			key := rel + ":" + fn + ":" + exprString(fset, prog)
			if _, ok := reviewed[key]; !ok {
				findings = append(findings, finding{at, "starts a program named by " + exprString(fset, prog) +
					", not shown to be a configured argv: trace where it comes from and add " + strconv.Quote(key) + " to reviewed"})
				return
			}
			matched = append(matched, key)
			if hasDashC(args) {
				findings = append(findings, finding{at, "passes -c to a program named by " + exprString(fset, prog) + ", as to a shell"})
			}
		}
	}

	// sinkIndex returns the index of the program argument if call is a call of a sink.
	sinkIndex := func(call *ast.CallExpr) (int, bool) {
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			if id, ok := fun.X.(*ast.Ident); ok && id.Obj == nil { // a package, not a local variable
				if p, ok := local[id.Name]; ok {
					i, ok := sinks[p][fun.Sel.Name]
					return i, ok
				}
			}
		case *ast.Ident:
			if p, ok := local["."]; ok && fun.Obj == nil {
				i, ok := sinks[p][fun.Name]
				return i, ok
			}
		}
		return 0, false
	}

	// isCmd reports whether t names exec.Cmd.
	isCmd := func(t ast.Expr) bool {
		switch t := t.(type) {
		case *ast.SelectorExpr:
			id, ok := t.X.(*ast.Ident)
			return ok && local[id.Name] == "os/exec" && t.Sel.Name == "Cmd"
		case *ast.Ident:
			return local["."] == "os/exec" && t.Name == "Cmd"
		}
		return false
	}

	inspect := func(fn string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if i, ok := sinkIndex(n); ok {
					if i >= len(n.Args) || n.Ellipsis.IsValid() && i == len(n.Args)-1 {
						// The program is inside a spread slice: nothing to read.
						findings = append(findings, finding{fset.Position(n.Pos()), "starts a program from a spread argument list"})
						return true
					}
					program(fn, n.Args[i], n.Args[i+1:])
				}
			case *ast.CompositeLit:
				// exec.Cmd{Path: ..., Args: ...} starts whatever Path says.
				if isCmd(n.Type) {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Path" {
								program(fn, kv.Value, cmdArgs(n))
							}
						}
					}
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			inspect(funcName(fd), fd)
		} else {
			inspect("var", d)
		}
	}
	return findings, matched
}

// literal returns the string a string literal or a constant of this file initialised with one
// stands for. A constant from another file is not followed: it reads as an expression, which
// must then be reviewed.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.ParenExpr:
		return literal(e.X)
	case *ast.Ident:
		if e.Obj == nil || e.Obj.Kind != ast.Con {
			return "", false
		}
		if vs, ok := e.Obj.Decl.(*ast.ValueSpec); ok {
			for i, n := range vs.Names {
				if n.Name == e.Name && i < len(vs.Values) {
					return literal(vs.Values[i])
				}
			}
		}
	}
	return "", false
}

func isShell(program string) bool {
	return slices.Contains(shells, path.Base(strings.ReplaceAll(program, `\`, "/")))
}

// hasDashC reports whether an argument is the literal -c (or cmd's /c): "run the next argument
// as a script".
func hasDashC(args []ast.Expr) bool {
	return slices.ContainsFunc(args, func(a ast.Expr) bool {
		s, ok := literal(a)
		return ok && (s == "-c" || strings.EqualFold(s, "/c"))
	})
}

// cmdArgs returns the elements of the Args field of an exec.Cmd literal, if it is a slice literal.
func cmdArgs(c *ast.CompositeLit) []ast.Expr {
	for _, e := range c.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Args" {
				if l, ok := kv.Value.(*ast.CompositeLit); ok {
					return l.Elts
				}
			}
		}
	}
	return nil
}

// funcName is "Name" for a function and "(*T).Name" or "(T).Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok { // a generic receiver, T[P]
		t = g.X
	}
	if g, ok := t.(*ast.IndexListExpr); ok {
		t = g.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	return "(" + star + name + ")." + fd.Name.Name
}

// exprString renders e as it is written in the source.
func exprString(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	if err := printer.Fprint(&b, fset, e); err != nil {
		return "?"
	}
	return b.String()
}

// TestNoShell parses every Go file of the module that is not a test (whatever its build tags)
// and checks each place that starts a program.
func TestNoShell(t *testing.T) {
	root, err := modroot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var findings []finding
	matched := map[string]bool{}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// testdata may hold Go that is broken on purpose; dot directories are not the module's.
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0) // with objects resolved: constants are followed
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		found, m := check(fset, f, filepath.ToSlash(rel), reviewed)
		findings = append(findings, found...)
		for _, k := range m {
			matched[k] = true
		}
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d files under %s: is the walk broken?", files, root)
	}
	for _, f := range findings {
		// Relative to the module, so the message is the same on every machine.
		if rel, err := filepath.Rel(root, f.pos.Filename); err == nil {
			f.pos.Filename = rel
		}
		t.Error(f)
	}
	for key := range reviewed {
		if !matched[key] {
			t.Errorf("reviewed entry %q matches nothing any more: remove it, or review the place that replaced it", key)
		}
	}
	t.Logf("%d files, %d reviewed places that start a configured program", files, len(matched))
}

// TestChecker runs the checker on small sources: the test above is only as good as the
// checker's ability to fail.
func TestChecker(t *testing.T) {
	reviewedHere := map[string]string{"x.go:(*face).run:f.path": "reviewed for this test"}
	cases := []struct {
		name string
		src  string // the body of a file after the package clause
		want []string
	}{
		{"sh -c with input", `import "os/exec"
func run(input string) { exec.Command("sh", "-c", input).Run() }`,
			[]string{`starts the shell "sh"`}},
		{"bash by path with a context", `import ("context"; "os/exec")
func run(ctx context.Context, input string) { exec.CommandContext(ctx, "/bin/bash", "-c", input).Run() }`,
			[]string{`starts the shell "/bin/bash"`}},
		{"cmd /c", `import "os/exec"
func run(input string) { exec.Command("cmd", "/c", input).Run() }`,
			[]string{`starts the shell "cmd"`}},
		{"a shell not in the list, with -c", `import "os/exec"
func run(input string) { exec.Command("/usr/local/bin/yash", "-c", input).Run() }`,
			[]string{`starts "/usr/local/bin/yash" with -c`}},
		{"renamed import", `import run "os/exec"
func f(input string) { run.Command("sh", "-c", input).Run() }`,
			[]string{`starts the shell "sh"`}},
		{"dot import", `import . "os/exec"
func f(input string) { Command("zsh", input).Run() }`,
			[]string{`starts the shell "zsh"`}},
		{"constant", `import "os/exec"
const shell = "sh"
func f(input string) { exec.Command(shell, "-c", input).Run() }`,
			[]string{`starts the shell "sh"`}},
		{"program from a variable", `import "os/exec"
func f(prog string) { exec.Command(prog, "x").Run() }`,
			[]string{`starts a program named by prog, not shown to be a configured argv`}},
		{"exec.Cmd literal", `import "os/exec"
func f(input string) { c := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", input}}; c.Run() }`,
			[]string{`starts the shell "/bin/sh"`}},
		{"syscall.Exec", `import "syscall"
func f(input string) { syscall.Exec("/bin/sh", []string{"sh", "-c", input}, nil) }`,
			[]string{`starts the shell "/bin/sh"`}},
		{"mixerexec.Run with a variable", `import "github.com/devicectl/devicectl/internal/mixerexec"
func f(prog string) { mixerexec.Run(nil, nil, "pkg", prog) }`,
			[]string{`starts a program named by prog`}},
		{"reviewed, but used as a shell", `import "os/exec"
type face struct{ path string }
func (f *face) run(input string) { exec.Command(f.path, "-c", input).Run() }`,
			[]string{`passes -c to a program named by f.path`}},
		{"spread program", `import "os/exec"
func f(argv []string) { exec.Command(argv...).Run() }`,
			[]string{`spread argument list`}},

		// What must pass: a literal program that is no shell (amixer's -c is a card number), a
		// reviewed program, a local variable that merely shares the package's name.
		{"amixer -c", `import "os/exec"
func f(card string) { exec.Command("amixer", "-c", card, "sget", "Master").Run() }`, nil},
		{"reviewed program", `import "os/exec"
type face struct{ path string }
func (f *face) run(e string) { exec.Command(f.path, e).Run() }`, nil},
		{"no exec import", `func f() { var exec struct{ Command func(string) }; exec.Command("sh") }`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\n"+tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			findings, _ := check(fset, f, "x.go", reviewedHere)
			var got []string
			for _, f := range findings {
				got = append(got, f.what)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("finding %q, want one saying %q", got[i], w)
				}
			}
		})
	}
}
