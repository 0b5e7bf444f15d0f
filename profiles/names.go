package profiles

import "crypto/tls"

// ClientConfigs returns one client configuration per server name of names,
// in their order: each is ClientConfig(base) with that ServerName (SNI and
// the name verified). They share one cache of verified chains keyed by
// (leaf, name): a certificate's chain is verified once for all the names,
// and whether it is valid for a name once per name, so that a run of 1,000
// names served with one certificate verifies one chain and 1,000 names,
// not a chain per handshake.
func (p *Profile) ClientConfigs(base *tls.Config, names []string) []*tls.Config {
	one := p.ClientConfig(base)
	var chains *chainCache
	if base == nil || !base.InsecureSkipVerify {
		chains = newChainCache(one.RootCAs, len(names))
	}
	out := make([]*tls.Config, len(names))
	for i, name := range names {
		c := one.Clone()
		c.ServerName = name
		c.VerifyConnection = p.verifyConnection(chains, name)
		out[i] = c
	}
	return out
}
