package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// serveMTLS are serve's client-certificate flags (mutual TLS,
// docs/MTLS.md): whether the listeners ask for a client certificate, and
// the CA that must have issued it: given (--client-ca), or generated and
// written for the clients (--client-ca-out, --client-ca-key-out).
type serveMTLS struct {
	auth            string // --client-auth: "" (as the profiles say), none, request, require
	caFile          string
	caOut, caKeyOut string
	ca              *cipher.CA // generated (run)
}

func (m *serveMTLS) add(fs *pflag.FlagSet) {
	fs.StringVar(&m.auth, "client-auth", "", "`MODE` of client certificates (mutual TLS): require (verified), "+
		"request (verified if given) or none; default: required by the profiles with client_cert when a client CA "+
		"is known")
	fs.StringVar(&m.caFile, "client-ca", "", "verify client certificates with the CA certificates in `FILE` (PEM)")
	fs.StringVar(&m.caOut, "client-ca-out", "", "without --client-ca: generate a client CA, verify with it and "+
		"write its certificate to `FILE` (PEM)")
	fs.StringVar(&m.caKeyOut, "client-ca-key-out", "", "also write the generated client CA's private key to `FILE` "+
		"(mode 0600), for tlsbench cps --client-ca-key")
}

// check checks the flags (no file read or written).
func (m *serveMTLS) check() error {
	switch {
	case m.auth != "" && m.auth != "none" && m.auth != "request" && m.auth != "require":
		return usagef("bad --client-auth %q: want require, request or none", m.auth)
	case m.auth == "none" && (m.caFile != "" || m.caOut != ""):
		return usagef("--client-auth none verifies no client certificate: it takes no --client-ca or --client-ca-out")
	case m.caFile != "" && m.caOut != "":
		return usagef("--client-ca-out writes a generated client CA; with --client-ca the CA is yours already")
	case m.auth == "require" && m.caFile == "" && m.caOut == "":
		return usagef("--client-auth require verifies client certificates: give --client-ca FILE, or --client-ca-out " +
			"FILE to generate the CA (and --client-ca-key-out to issue certificates with it)")
	}
	return checkCAOutputs(m.caOut, m.caKeyOut)
}

// configure sets the target's client authentication: reads --client-ca or
// generates the CA of --client-ca-out (written by write).
func (m *serveMTLS) configure(cfg *target.Config) error {
	switch {
	case m.caFile != "":
		pool, err := profiles.LoadRoots(m.caFile)
		if err != nil {
			return cacertError("--client-ca", err)
		}
		cfg.ClientCAs = pool
	case m.caOut != "":
		ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench client CA", clientCAValidity)
		if err != nil {
			return err
		}
		m.ca, cfg.ClientCAs = ca, ca.Pool()
	}
	switch {
	case m.auth == "require":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case m.auth == "request" && cfg.ClientCAs != nil:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case m.auth == "request":
		cfg.ClientAuth = tls.RequestClientCert
	}
	return nil
}

// write writes the generated client CA (0644) and its key (0600), and
// warns of profiles that require a client certificate served without one.
func (m *serveMTLS) write(ctx context.Context, cfg *target.Config, stdout, stderr io.Writer) error {
	if cfg.ClientCAs == nil && m.auth == "" {
		for _, p := range cfg.Profiles {
			if !p.ClientCertKey().IsZero() {
				fmt.Fprintf(stderr, "tlsbench serve: profile %s asks for no client certificate: give --client-ca "+
					"or --client-ca-out to require one\n", p.Name)
			}
		}
	}
	if m.ca == nil {
		return nil
	}
	return writeClientCA(ctx, m.ca, m.caOut, m.caKeyOut, stdout, stderr)
}
