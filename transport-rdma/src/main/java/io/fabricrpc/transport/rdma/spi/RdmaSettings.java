package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.api.TransportException;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Map;

import static io.fabricrpc.transport.rdma.spi.RdmaTransportProvider.check;
import static io.fabricrpc.transport.rdma.spi.RdmaTransportProvider.number;

/**
 * The parsed {@code rdma.*} settings of one {@link RdmaTransport}, each checked against its range here so that a bad
 * value fails at join with its key in the message: {@code bindAddress} (IPv4 of the RDMA interface; default: the
 * first interface that backs an RDMA device), {@code port} (0 = ephemeral), {@code sendQueueDepth} (64),
 * {@code receiveQueueDepth} (32, messages in flight per link and direction), {@code signalInterval} (16, every k-th
 * request is signaled; below the send queue depth), {@code maxMessageSize} (4088; must match between peers),
 * {@code connectTimeoutMillis} (3000), {@code operationTimeoutMillis} (10000: a request not complete by then fails
 * its link), {@code heartbeatMillis} (500: idle links are probed this often; 0 turns the heartbeat off).
 */
record RdmaSettings(Inet4Address bindAddress, int port, int sqDepth, int recvDepth, int signalInterval,
                    int maxMessageSize, long connectTimeoutMillis, long operationTimeoutMillis, long heartbeatMillis) {
    static RdmaSettings from(Map<String, String> config) {
        Inet4Address bind;
        String configured = config.get("rdma.bindAddress");
        if (configured == null || configured.isBlank()) {
            bind = RdmaAddresses.rdmaInterfaceAddress();
        } else {
            try {
                InetAddress parsed = InetAddress.getByName(configured.trim());
                check(parsed instanceof Inet4Address, "rdma.bindAddress must be an IPv4 address, got " + configured);
                bind = (Inet4Address) parsed;
            } catch (IOException e) {
                throw new TransportException("rdma.bindAddress '" + configured + "' is not an address: " + e.getMessage());
            }
        }
        int sq = (int) number(config, "rdma.sendQueueDepth", 64, 4, 4096);
        int signal = (int) number(config, "rdma.signalInterval", Math.min(16, sq - 1), 1, 4096);
        check(signal < sq, "rdma.signalInterval (" + signal + ") must be below rdma.sendQueueDepth (" + sq + ")");
        return new RdmaSettings(bind, (int) number(config, "rdma.port", 0, 0, 65535), sq,
                (int) number(config, "rdma.receiveQueueDepth", 32, 2, 4096), signal,
                (int) number(config, "rdma.maxMessageSize", 4088, 64, 1 << 20),
                number(config, "rdma.connectTimeoutMillis", 3000, 1, 600_000),
                number(config, "rdma.operationTimeoutMillis", 10_000, 1, 3_600_000),
                number(config, "rdma.heartbeatMillis", 500, 0, 600_000));
    }
}
