// Package modroot finds the module's root directory from a test's working directory (go test
// runs each test in its package's directory), for helpers that read files kept at fixed places
// in the tree, such as the npm peers scripts/ installs.
package modroot

import (
	"errors"
	"os"
	"path/filepath"
)

// Dir is the nearest directory at or above the working directory that holds go.mod.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
