package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// Mutual TLS (docs/MTLS.md): where the engine commands' client certificate
// comes from, and the CA they write for the device.

// mtlsFlags are the engine commands' client-certificate flags; the files
// to read are bound into the spec (tlsconn.ClientAuth), the files to write
// are here.
type mtlsFlags struct {
	caOut, caKeyOut string
	// inProcess: the run is against the in-process reference target (no
	// URL), which trusts the run's CA.
	inProcess bool
	// pool verifies the client certificate in the in-process reference
	// target (nil: no profile requires one and none is given); auth is
	// its client authentication (with --cert: required on every listener,
	// so that the certificate is presented whatever the profile).
	pool *x509.CertPool
	auth tls.ClientAuthType
}

// clientCAValidity is how long a generated client CA is valid: a device
// configured to trust it keeps it across runs.
const clientCAValidity = 10 * 365 * 24 * time.Hour

// add binds the flags, one block.
func (m *mtlsFlags) add(fs *pflag.FlagSet, s *runner.Spec) {
	fs.StringVar(&s.ClientCertFile, "cert", "", "mutual TLS: present this client certificate `FILE` (PEM) whenever "+
		"the server asks (any profile)")
	fs.StringVar(&s.ClientKeyFile, "key", "", "mutual TLS: private key `FILE` (PEM) of --cert")
	fs.StringVar(&s.ClientCAFile, "client-ca", "", "mutual TLS: issue the client certificate of a client_cert "+
		"profile with this CA certificate `FILE` (PEM; with --client-ca-key)")
	fs.StringVar(&s.ClientCAKeyFile, "client-ca-key", "", "mutual TLS: private key `FILE` (PEM) of --client-ca")
	fs.StringVar(&m.caOut, "client-ca-out", "", "mutual TLS: generate the CA that issues the client certificate "+
		"and write its certificate to `FILE` (PEM, before any load), for the device to trust")
	fs.StringVar(&m.caKeyOut, "client-ca-key-out", "", "mutual TLS: also write the generated CA's private key to "+
		"`FILE` (mode 0600), to reuse it with --client-ca-key")
}

// check checks the flags once the profiles are known, reads the given
// files, and makes the CA of the run when one is needed: a client_cert
// profile without --cert or --client-ca, against the in-process target or
// with --client-ca-out. No file is written.
func (m *mtlsFlags) check(s *runner.Spec, ps []*profiles.Profile) error {
	if err := m.checkFlags(s); err != nil {
		return err
	}
	var needs []string // profiles that require a client certificate
	for _, p := range ps {
		if !p.ClientCertKey().IsZero() {
			needs = append(needs, p.Name)
		}
	}
	switch {
	case len(needs) == 0 && (s.ClientCAFile != "" || m.caOut != ""):
		return usagef("--client-ca and --client-ca-out issue the certificate a client_cert profile requires, and "+
			"profile %s requires none: give --cert and --key to present one", ps[0].Name)
	case s.ClientCertFile != "":
		return m.loadCert(s, ps)
	case s.ClientCAFile != "":
		ca, err := tlsconn.LoadClientCA(s.ClientCAFile, s.ClientCAKeyFile)
		if err != nil {
			return clientCertUsage(err)
		}
		m.pool = ca.Pool()
		return nil
	case len(needs) == 0:
		return nil
	case !m.inProcess && m.caOut == "":
		return usagef("profile %s requires a client certificate: give --cert and --key, or --client-ca and "+
			"--client-ca-key, or --client-ca-out FILE to write the CA generated for the run (the device must trust it)",
			needs[0])
	}
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench client CA", clientCAValidity)
	if err != nil {
		return err
	}
	s.ClientCA, m.pool = ca, ca.Pool()
	return nil
}

// checkFlags checks the flags that go together, or not, and the outputs.
func (m *mtlsFlags) checkFlags(s *runner.Spec) error {
	switch {
	case (s.ClientCertFile == "") != (s.ClientKeyFile == ""):
		return usagef("--cert and --key go together")
	case (s.ClientCAFile == "") != (s.ClientCAKeyFile == ""):
		return usagef("--client-ca and --client-ca-key go together (the key issues the run's client certificate)")
	case s.ClientCertFile != "" && (s.ClientCAFile != "" || m.caOut != ""):
		return usagef("--cert gives the client certificate: it takes no --client-ca or --client-ca-out")
	case s.ClientCAFile != "" && m.caOut != "":
		return usagef("--client-ca-out writes a CA generated for the run; with --client-ca the CA is yours already")
	}
	return checkCAOutputs(m.caOut, m.caKeyOut)
}

// checkCAOutputs checks --client-ca-out and --client-ca-key-out (the engines'
// and serve's): the key with its CA, in a file of its own.
func checkCAOutputs(ca, key string) error {
	switch {
	case key != "" && ca == "":
		return usagef("--client-ca-key-out writes the key of the CA of --client-ca-out: give both")
	case key == stdoutName:
		return usagef("--client-ca-key-out: a private key is not written to standard output")
	case key != "" && filepath.Clean(key) == filepath.Clean(ca):
		return usagef("--client-ca-out and --client-ca-key-out name the same file %s: the key would replace the CA "+
			"certificate the device must trust", ca)
	}
	return checkOutputs([2]string{"--client-ca-out", ca}, [2]string{"--client-ca-key-out", key})
}

// loadCert reads --cert and --key and checks the key type of every profile
// that requires a client certificate.
func (m *mtlsFlags) loadCert(s *runner.Spec, ps []*profiles.Profile) error {
	for _, p := range ps {
		if _, err := s.ClientAuth.ClientCertificate(p); err != nil {
			return clientCertUsage(err)
		}
	}
	cert, err := tls.LoadX509KeyPair(s.ClientCertFile, s.ClientKeyFile)
	if err != nil {
		return clientCertUsage(err)
	}
	// The in-process target trusts the chain given (its last certificate
	// is the CA's, or the certificate itself when self-signed).
	m.pool, m.auth = x509.NewCertPool(), tls.RequireAndVerifyClientCert
	for _, der := range cert.Certificate {
		if c, err := x509.ParseCertificate(der); err == nil {
			m.pool.AddCert(c)
		}
	}
	return nil
}

// clientCertFlags names the flag of each tlsconn.ClientCertError field.
var clientCertFlags = map[string]string{
	"client_cert_file": "--cert/--key", "client_ca_file": "--client-ca", "client_ca_key_file": "--client-ca-key",
}

// clientCertUsage words an error of the client certificate's files with
// its flag, on one line.
func clientCertUsage(err error) error {
	var ce *tlsconn.ClientCertError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ce) && errors.As(err, &pe):
		return usagef("%s: %s", clientCertFlags[ce.Field], flatten(ce.Err)) // the error names its file
	case errors.As(err, &ce):
		return usagef("%s %s: %s", clientCertFlags[ce.Field], ce.File, flatten(ce.Err))
	}
	return usagef("%s", flatten(err))
}

// flatten puts an error's text on one line.
func flatten(err error) string {
	return strings.Join(strings.Fields(fmt.Sprint(err)), " ")
}

// write writes the generated CA (--client-ca-out, 0644) and its key
// (--client-ca-key-out, 0600) before any load, each atomically.
func (m *mtlsFlags) write(ctx context.Context, s *runner.Spec, stdout, stderr io.Writer) error {
	if m.caOut == "" || s.ClientCA == nil {
		return nil
	}
	return writeClientCA(ctx, s.ClientCA, m.caOut, m.caKeyOut, stdout, stderr)
}

// writeClientCA writes a generated client CA's certificate to certFile
// (--client-ca-out, 0644) and, when keyFile is set, its key
// (--client-ca-key-out, 0600).
func writeClientCA(ctx context.Context, ca *cipher.CA, certFile, keyFile string, stdout, stderr io.Writer) error {
	if err := outfile.WriteOut(ctx, certFile, ca.CertPEM(), 0o644, stdout, stderr); err != nil {
		return fmt.Errorf("writing --client-ca-out: %w", err)
	}
	if keyFile == "" {
		return nil
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	if err := outfile.WriteContext(ctx, keyFile, key, 0o600, outfile.ReaderNote(stderr, keyFile)); err != nil {
		return fmt.Errorf("writing --client-ca-key-out: %w", err)
	}
	return nil
}

// clientCertHint is what a failed preflight's answer says of the client
// certificate: refused, required and not given, or refused by nginx, which
// answers HTTP 400 instead of an alert (its verify callback accepts every
// certificate, and the request is refused once the handshake is done).
func clientCertHint(r *metrics.Run) string {
	pf, cc := r.Preflight, r.Target.ClientCert
	switch {
	case pf.Class == vocab.ClassClientCertRefused && cc == nil:
		return "; the device requires a client certificate: give --cert and --key, or a client_cert profile " +
			"(docs/MTLS.md)"
	case pf.Class == vocab.ClassClientCertRefused:
		return fmt.Sprintf("; the device refused the run's %s client certificate (%s): does it trust the CA that "+
			"issued it? (docs/MTLS.md)", cc.Key, cc.Source)
	case pf.Class == vocab.ClassStatus && cc != nil && strings.Contains(pf.Error, "400"):
		return "; a device that answers 400 may have refused the client certificate (nginx does, instead of an alert: " +
			"its error log says why)"
	}
	return ""
}
