package config

import (
	"slices"

	"github.com/spf13/pflag"
)

// BindFlags defines on fs the flags of the settings with the given flag names. Their values are
// checked as they are parsed, so a bad flag fails before anything starts, naming the flag.
// defaults supplies the values --help shows.
func BindFlags(fs *pflag.FlagSet, defaults *Config, names ...string) {
	for _, name := range names {
		i := slices.IndexFunc(settings, func(s setting) bool { return s.flag == name })
		if i < 0 {
			panic("devicectl: no setting has the flag --" + name)
		}
		s := &settings[i]
		f := fs.VarPF(&settingFlag{s: s, text: s.get(defaults)}, name, "", s.help()+" ("+s.key+")")
		if s.typ == "bool" {
			f.NoOptDefVal = "true"
		}
	}
}

// FlagChoices returns the values a config flag takes when they are a fixed list (--log-level's
// levels, --hardware's modes), for shell completion; nil for any other flag.
func FlagChoices(flag string) []string {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.flag == flag })
	if i < 0 {
		return nil
	}
	if settings[i].choices == nil {
		return nil
	}
	return slices.Clone(settings[i].choices())
}

// ApplyFlags copies the config flags given on the command line onto c: flags win over the file.
// A nil fs has none.
func ApplyFlags(fs *pflag.FlagSet, c *Config) error {
	if fs == nil {
		return nil
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		sf, ok := f.Value.(*settingFlag)
		if !ok || err != nil {
			return
		}
		if e := sf.s.set(c, sf.text); e != nil {
			err = &Error{Key: "--" + f.Name, Err: e}
		}
	})
	return err
}

// settingFlag is a pflag.Value holding a setting's text until ApplyFlags.
type settingFlag struct {
	s    *setting
	text string
}

func (f *settingFlag) String() string { return f.text }
func (f *settingFlag) Type() string   { return f.s.typ }

func (f *settingFlag) Set(v string) error {
	if err := f.s.set(Defaults(), v); err != nil {
		return err
	}
	f.text = v
	return nil
}
