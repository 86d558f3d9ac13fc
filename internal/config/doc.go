// Package config is devicectl's configuration: the YAML file, the flags that override it and the
// environment, parsed once into typed values (durations, sizes, a log level, driver names checked
// against those the program registered with hal/driverreg) with errors that name the key and its
// line (*Error). The settings table in config.go is the one place that parses, validates and
// documents every key; BindFlags and Resolve give a command its flags and its Config.
//
// Besides the values, the package resolves what they point at for the daemon and the other
// commands: the bearer token and other secrets (ReadToken, ReadSecret), the TLS settings, the MAC,
// the Client-Id's state directory, the logger, and the agent's device.Options.
//
// Every file a user names is read through internal/safefile: a regular file only (a FIFO, a
// directory or a device is refused at once, naming the path and what it is), up to a cap
// (MaxFileSize for the config, MaxSecretSize for a secret). A config's YAML aliases may add at
// most MaxAliasNodes nodes, checked before anything is decoded; a secret may hold only what an
// HTTP header may carry.
package config
