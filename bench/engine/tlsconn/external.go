package tlsconn

import (
	"crypto/tls"
	"net"
)

// Begin starts the opening of a connection whose TLS handshake another
// transport makes (QUIC: quic-go carries it in its own packets): it returns
// the source address to send from (nil: any), in turn as Dial's, and the TLS
// configuration, the next server name's with, when the run resumes, the
// worker's session cache (a session offered or not, as Dial's).
func (d *Dialer) Begin() (net.IP, *tls.Config) {
	var src net.IP
	if n := len(d.c.cfg.Sources); n > 0 {
		src = d.c.cfg.Sources[d.next%n]
		d.next++
	}
	d.sess.turn()
	return src, d.sess.config(d.clientConfig())
}

// Verified ends Begin's opening: err is the handshake's failure, else cs
// is checked against the profile and the session offered (as Dial checks
// a TCP connection's), and a verified connection is counted open until
// Released.
func (d *Dialer) Verified(cs *tls.ConnectionState, err error) error {
	if err == nil {
		if err = d.c.cfg.Profile.VerifyResumption(*cs, d.sess.offered()); err == nil {
			err = d.sess.missing()
		}
	}
	if err != nil {
		d.nameFailed()
		return err
	}
	d.c.opened()
	return nil
}

// Released counts a connection that Verified counted open as closed.
func (e *Endpoint) Released() { e.open.Add(-1) }
