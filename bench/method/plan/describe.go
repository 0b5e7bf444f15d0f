package plan

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Description says what a DUT (duts[].describe) or the load generator
// (generator) is, for the report's reader; it changes nothing in a run.
type Description struct {
	// Model is the hardware or product ("HAProxy on a 2-vCPU VM").
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// Version is the software version ("HAProxy 2.6.12", "Linux 6.1").
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Topology is how the traffic passes ("client TLS, server plaintext").
	Topology string `yaml:"topology,omitempty" json:"topology,omitempty"`
	// Config is the configuration, or an excerpt. ConfigFile names its
	// file: when Config is empty, ParsePlan reads the file (relative to the
	// plan) into Config, so that the resolved plan.yaml holds it.
	Config     string `yaml:"config,omitempty" json:"config,omitempty"`
	ConfigFile string `yaml:"config_file,omitempty" json:"config_file,omitempty"`
}

// Limits of a description's fields.
const (
	MaxConfigBytes = 64 << 10 // config, or the config_file read into it
	maxLineRunes   = 200      // model, version, topology
)

// Empty reports whether d says nothing (nil included).
func (d *Description) Empty() bool { return d == nil || *d == Description{} }

// check checks a description's fields; at is the path of its key.
func (d *Description) check(at ...string) error {
	if d == nil {
		return nil
	}
	name := strings.Join(at, ".")
	for _, f := range []struct{ key, v string }{
		{"model", d.Model},
		{"version", d.Version},
		{"topology", d.Topology},
		{"config_file", d.ConfigFile},
	} {
		switch {
		case !utf8.ValidString(f.v):
			return ferr(fmt.Sprintf("%s.%s is not valid UTF-8", name, f.key), append(at, f.key)...)
		case strings.ContainsFunc(f.v, unicode.IsControl):
			return ferr(fmt.Sprintf("%s.%s must be one line without control characters", name, f.key), append(at, f.key)...)
		case utf8.RuneCountInString(f.v) > maxLineRunes:
			return ferr(fmt.Sprintf("%s.%s is %d characters long; at most %d",
				name, f.key, utf8.RuneCountInString(f.v), maxLineRunes), append(at, f.key)...)
		}
	}
	if err := checkConfigText(d.Config); err != nil {
		return ferr(fmt.Sprintf("%s.config %v", name, err), append(at, "config")...)
	}
	return nil
}

// checkConfigText checks a configuration's text: UTF-8, no control
// characters but tabs and line ends, at most MaxConfigBytes.
func checkConfigText(s string) error {
	switch {
	case len(s) > MaxConfigBytes:
		return fmt.Errorf("is %d bytes; at most %d (give an excerpt)", len(s), MaxConfigBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("is not valid UTF-8 text")
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }):
		return fmt.Errorf("holds control characters: not a text file")
	}
	return nil
}

// descriptions returns the plan's descriptions and their keys' paths.
func (p *Plan) descriptions() (ds []*Description, paths [][]string) {
	for i := range p.DUTs {
		if d := p.DUTs[i].Describe; d != nil {
			ds, paths = append(ds, d), append(paths, []string{"duts", strconv.Itoa(i), "describe"})
		}
	}
	if p.Generator != nil {
		ds, paths = append(ds, p.Generator), append(paths, []string{"generator"})
	}
	return ds, paths
}

// checkDescriptions checks every description of the plan.
func (p *Plan) checkDescriptions() error {
	ds, paths := p.descriptions()
	for i, d := range ds {
		if err := d.check(paths[i]...); err != nil {
			return err
		}
	}
	return nil
}

// readConfigFiles reads each description's config_file into its config
// when that is empty, relative to dir (the plan's directory).
func (p *Plan) readConfigFiles(dir string) error {
	ds, paths := p.descriptions()
	for i, d := range ds {
		if d.ConfigFile == "" || d.Config != "" {
			continue
		}
		at := append(paths[i], "config_file")
		name := strings.Join(paths[i], ".") + ".config_file"
		text, err := readConfigFile(filepath.Join(dir, d.ConfigFile))
		if err != nil {
			return ferr(fmt.Sprintf("%s %s: %v", name, d.ConfigFile, err), at...)
		}
		d.Config = text
	}
	return nil
}

// readConfigFile reads a configuration file of at most MaxConfigBytes.
func readConfigFile(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", pathErr(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return "", err
	}
	if err := checkConfigText(string(data)); err != nil {
		if len(data) > MaxConfigBytes {
			return "", fmt.Errorf("is larger than %d bytes (give an excerpt in config)", MaxConfigBytes)
		}
		return "", err
	}
	return string(data), nil
}
