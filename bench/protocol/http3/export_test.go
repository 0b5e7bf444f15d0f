package http3

import (
	"net"

	"github.com/quic-go/quic-go"

	"github.com/tlsbench/tlsbench/bench/protocol"
)

// Share makes op's connections share one UDP socket (a quic.Transport
// demultiplexing by connection ID), to measure it against a socket per
// connection; close releases the socket.
func Share(op protocol.Op) (close func(), err error) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		return nil, err
	}
	var b *base
	switch op := op.(type) {
	case *cpsOp:
		b = op.base
	case *tputOp:
		b = op.base
	}
	b.shared = &quic.Transport{Conn: udp}
	return func() { _ = b.shared.Close(); _ = udp.Close() }, nil
}
