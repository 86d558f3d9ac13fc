// Package config is devicectl's configuration: the YAML file, the flags that override it and the
// environment, parsed once into typed values (durations, sizes, a log level, driver names checked
// against hal/driverreg) with errors that name the key and its line (*Error). The settings table
// in config.go is the one place that parses, validates and documents every key; BindFlags and
// Resolve give a command its flags and its Config.
//
// Besides the values, the package resolves what they point at for the daemon and the other
// commands: the bearer token and other secrets (ReadSecret), the TLS settings, the MAC, the
// Client-Id's state directory, the logger, and the agent's device.Options.
package config
