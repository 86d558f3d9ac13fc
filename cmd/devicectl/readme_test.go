//go:build !devicectl_omit_serve || !devicectl_omit_sim

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/devicectl/devicectl/internal/config"
)

// update rewrites the golden files and the documents' generated sections from the program's output.
var update = flag.Bool("update", false, "rewrite testdata/*.golden and the generated sections of README.md and docs/")

// A generated section of a document: the text between <!-- begin NAME --> and <!-- end NAME -->,
// checked against the code; go test -run TestREADME -update rewrites it.
type section struct {
	file, name, want string
}

func TestREADME(t *testing.T) {
	golden, err := os.ReadFile("testdata/sim.golden")
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, []section{
		{"README.md", "screenshot", "```\n$ devicectl sim < cmd/devicectl/testdata/sim.txt\n" + string(golden) + "```\n"},
		{"docs/configuration.md", "config", configTable()},
	})
}

// checkSections compares each section with what it should hold, or with -update rewrites it.
func checkSections(t *testing.T, sections []section) {
	t.Helper()
	for _, s := range sections {
		path := filepath.Join(repoRoot, filepath.FromSlash(s.file))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`(?s)(<!-- begin ` + s.name + ` -->\n)(.*?)(<!-- end ` + s.name + ` -->)`)
		m := re.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s has no %s section", s.file, s.name)
			continue
		}
		if string(m[2]) == s.want {
			continue
		}
		if !*update {
			t.Errorf("%s's %s section is out of date (go test -run TestREADME -update rewrites it); want:\n%s", s.file, s.name, s.want)
			continue
		}
		out := re.ReplaceAllLiteral(data, []byte(string(m[1])+s.want+string(m[3])))
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// commandsDoc is the page that documents every command and its flags.
const commandsDoc = "docs/commands.md"

// Every command has its row in the commands table, and that row names each of its flags.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(commandsDoc)))
	if err != nil {
		t.Fatal(err)
	}
	rows := commandRows(string(data))
	for _, cmd := range newRootCmd().Commands() {
		if cmd.Hidden || cmd.Name() == "help" {
			continue
		}
		row, ok := rows[cmd.Name()]
		if !ok {
			t.Errorf("%s has no row for devicectl %s", commandsDoc, cmd.Name())
			continue
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if !strings.Contains(row, "`--"+f.Name+"`") && !strings.Contains(row, "`--"+f.Name+" ") {
				t.Errorf("%s: the row of devicectl %s does not name --%s", commandsDoc, cmd.Name(), f.Name)
			}
		})
	}
}

// commandRows returns the commands table's rows by command name: the lines that start
// "| `devicectl NAME".
func commandRows(doc string) map[string]string {
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `devicectl ([a-z]+)[^`]*`.*$").FindAllStringSubmatch(doc, -1) {
		rows[m[1]] = m[0]
	}
	return rows
}

func TestCommandRows(t *testing.T) {
	doc := "| command | what |\n|---|---|\n" +
		"| `devicectl run` | the daemon. Flags `--config`, `--server` |\n" +
		"| `devicectl call TOOL [JSON]` | one tool; `--hardware` |\n" +
		"Text that names `devicectl sim` and `--mac` outside the table.\n"
	rows := commandRows(doc)
	if len(rows) != 2 || !strings.Contains(rows["run"], "`--server`") || !strings.Contains(rows["call"], "`--hardware`") {
		t.Errorf("commandRows = %q", rows)
	}
}

// configTable is the reference of the config file in docs/configuration.md: every key, its flag,
// its default and what it means.
func configTable() string {
	var b strings.Builder
	b.WriteString("| key | flag | default | meaning |\n|---|---|---|---|\n")
	for _, k := range config.Keys(config.Defaults()) {
		flag := ""
		if k.Flag != "" {
			flag = "`--" + k.Flag + "`"
		}
		def := k.Default
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", k.Name, flag, def, strings.ReplaceAll(k.Usage, "|", `\|`))
		for _, it := range k.Items {
			def := it.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(&b, "| `%s` | | `%s` | %s |\n", it.Name, def, strings.ReplaceAll(it.Usage, "|", `\|`))
		}
	}
	return b.String()
}
