package metrics

// Gbps is the second's payload in gigabits (10^9 bits), its rate.
func (s Second) Gbps() float64 { return float64(s.PayloadBytes) * 8 / 1e9 }

// GroupOrKey is the published table's "ECDHE group / key" column: the
// group with its OpenSSL name, or "— (RSA 2048 key exchange)" when there is
// no key exchange group; "" when nothing was negotiated.
func (n Negotiated) GroupOrKey() string {
	switch n.Group {
	case "":
		return ""
	case "none":
		return "— (" + n.CertKey + " key exchange)"
	case "P-256":
		return "prime256v1 (P-256)"
	case "P-384":
		return "secp384r1 (P-384)"
	case "P-521":
		return "secp521r1 (P-521)"
	}
	return n.Group
}
