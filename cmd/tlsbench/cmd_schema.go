package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tlsbench/tlsbench/schemas"
)

const schemaUsage = `tlsbench schema [VERSION]

Lists the JSON Schemas (draft 2020-12) of tlsbench's JSON outputs, or prints
one: VERSION is what an output carries in its "schema" member
(tlsbench/run/v1) or the schema's file name (run.json, or run). Every
command validates the records, ledgers and summaries it reads; the schemas
let other tools check them too.`

func runSchema(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("schema")
	if err := parseFlags(fs, schemaUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	switch fs.NArg() {
	case 0:
		for _, v := range schemas.Versions() {
			fmt.Fprintf(stdout, "%-26s %s\n", v, schemas.Files[v])
		}
		return nil
	case 1:
		data, err := schemas.Get(fs.Arg(0))
		if err != nil {
			return usagef("%v", err)
		}
		_, err = stdout.Write(data)
		return err
	}
	return usagef("want one schema at most; got %d: %s", fs.NArg(), strings.Join(fs.Args(), ", "))
}
