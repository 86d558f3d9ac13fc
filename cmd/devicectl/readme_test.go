//go:build !devicectl_omit_serve || !devicectl_omit_sim

package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/devicectl/devicectl/internal/config"
)

// update rewrites the golden files and the README's generated sections from the program's output.
var update = flag.Bool("update", false, "rewrite testdata/*.golden and README.md's generated sections")

// The README's generated sections, between <!-- begin NAME --> and <!-- end NAME --> markers, are
// checked against the code; go test -run TestREADME -update rewrites them.
const readmePath = "../../README.md"

func TestREADME(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/sim.golden")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	sections := map[string]string{
		"config":     configTable(),
		"screenshot": "```\n$ devicectl sim < cmd/devicectl/testdata/sim.txt\n" + string(golden) + "```\n",
	}
	for name, want := range sections {
		re := regexp.MustCompile(`(?s)(<!-- begin ` + name + ` -->\n)(.*?)(<!-- end ` + name + ` -->)`)
		m := re.FindStringSubmatch(readme)
		if m == nil {
			t.Errorf("README.md has no %s section", name)
			continue
		}
		if m[2] == want {
			continue
		}
		if *update {
			readme = re.ReplaceAllLiteralString(readme, m[1]+want+m[3])
			continue
		}
		t.Errorf("README.md's %s section is out of date (go test -run TestREADME -update rewrites it); want:\n%s", name, want)
	}
	if *update && readme != string(data) {
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Every flag of every command is documented.
	root := newRootCmd()
	for _, cmd := range root.Commands() {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if !strings.Contains(readme, "--"+f.Name) {
				t.Errorf("README.md does not mention %s --%s", cmd.Name(), f.Name)
			}
		})
		if !strings.Contains(readme, "devicectl "+cmd.Name()) {
			t.Errorf("README.md does not mention devicectl %s", cmd.Name())
		}
	}
}

// configTable is the README's reference of the config file: every key, its flag, its default and
// what it means.
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
