package main

import (
	"net/url"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// objectFlags are --objects and --object-path (docs/OBJECTS.md).
type objectFlags struct {
	list, path string
}

func (o *objectFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&o.list, "objects", "", "ask for a weighted mix of objects: `LIST` of SIZE[:WEIGHT], e.g. 16k:3,64k:1 "+
		"or RFC 9411's 0.2k,6k,8k,9k,10k,25k,26k,35k,59k,347k (k: 1024 bytes); each body must have its object's size")
	fs.StringVar(&o.path, "object-path", "", "with --objects: where an object is asked for, `TEMPLATE` with {size} "+
		"in bytes (default "+httpreq.DefaultObjectPath+")")
}

// resolve sets the spec's objects; rawURL is the command's URL ("": the
// reference target), whose path the objects would replace.
func (o *objectFlags) resolve(s *runner.Spec, rawURL string) error {
	if o.list == "" {
		if o.path != "" {
			return usagef("--object-path takes --objects")
		}
		return nil
	}
	objs, err := httpreq.ParseObjects(o.list)
	if err != nil {
		return usagef("bad --objects %q: %v", o.list, err)
	}
	switch {
	case s.ExpectSize != -1:
		return usagef("--objects and --expect-size: each object's size is the only one its body may have")
	case rawURL != "":
		if u, err := url.Parse(rawURL); err == nil && u.Path != "" && u.Path != "/" {
			return usagef("--objects asks for each object at --object-path: the URL's path %s would be ignored", u.Path)
		}
	}
	s.Objects, s.ObjectPath = objs, o.path
	return nil
}
