package io.fabricrpc.fabric;

import static org.junit.jupiter.api.Assertions.*;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The handshake seen from a hand-written peer speaking the wire format of {@link ControlProtocol}. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HandshakeTest {

    static final byte[] SECRET = ControlPlaneTest.SECRET.getBytes(StandardCharsets.UTF_8);

    static void send(DataOutputStream out, byte type, byte[] body) throws IOException {
        out.writeInt(1 + body.length);
        out.writeByte(type);
        out.write(body);
        out.flush();
    }

    /** Reads one frame; returns type followed by body. */
    static byte[] receive(DataInputStream in) throws IOException {
        int len = in.readInt();
        byte[] frame = new byte[len];
        in.readFully(frame);
        return frame;
    }

    static byte[] hello(int rank, int size, byte[] nonce) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(17 + nonce.length);
        b.putInt(ControlProtocol.MAGIC).putInt(rank).putInt(size).putInt(1).put(ControlProtocol.FLAG_HAS_SECRET)
            .put(nonce);
        return b.array();
    }

    @Test
    void authenticatedClaimOfRankZeroIsRefusedNamingTheRange() throws Exception {
        try (ControlPlane c = ControlPlane.start(ControlPlaneTest.config(0, 3, 0).build());
             Socket s = new Socket("127.0.0.1", c.coordinatorPort())) {
            s.setSoTimeout(5000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] nonceM = new byte[32];
            new SecureRandom().nextBytes(nonceM);
            send(out, ControlProtocol.HELLO, hello(0, 3, nonceM));
            byte[] challenge = receive(in);
            assertEquals(ControlProtocol.CHALLENGE, challenge[0]);
            byte[] nonceC = java.util.Arrays.copyOfRange(challenge, 1, 33);
            byte[] mac = ControlProtocol.mac(SECRET, (byte) 'M', 0, 3, 1, nonceM, nonceC);
            byte[] auth = new byte[33];
            auth[0] = 32;
            System.arraycopy(mac, 0, auth, 1, 32);
            send(out, ControlProtocol.AUTH, auth);
            byte[] refuse = receive(in);
            assertEquals(ControlProtocol.REFUSE, refuse[0]);
            assertEquals(JoinRefusedException.Reason.BAD_RANK.ordinal(), refuse[1]);
            String message = new String(refuse, 4, refuse.length - 4, StandardCharsets.UTF_8);
            assertTrue(message.contains("rank must be in [1, 3)"), message);
            assertEquals(JoinRefusedException.Reason.BAD_RANK, c.refusals().get(0).reason());
        }
    }

    @Test
    void reflectedCoordinatorProofIsNotAcceptedAsAMemberProof() throws Exception {
        try (ControlPlane c = ControlPlane.start(ControlPlaneTest.config(0, 3, 0).build());
             Socket s = new Socket("127.0.0.1", c.coordinatorPort())) {
            s.setSoTimeout(5000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] nonceM = new byte[32];
            send(out, ControlProtocol.HELLO, hello(1, 3, nonceM));
            byte[] nonceC = java.util.Arrays.copyOfRange(receive(in), 1, 33);
            // Someone without the secret can only replay what they saw; a coordinator-role MAC must not pass.
            byte[] wrongRole = ControlProtocol.mac(SECRET, (byte) 'C', 1, 3, 1, nonceM, nonceC);
            byte[] auth = new byte[33];
            auth[0] = 32;
            System.arraycopy(wrongRole, 0, auth, 1, 32);
            send(out, ControlProtocol.AUTH, auth);
            byte[] refuse = receive(in);
            assertEquals(ControlProtocol.REFUSE, refuse[0]);
            assertEquals(JoinRefusedException.Reason.WRONG_SECRET.ordinal(), refuse[1]);
        }
    }

    @Test
    void memberRefusesACoordinatorThatCannotProveTheSecret() throws Exception {
        try (ServerSocket fake = new ServerSocket(0)) {
            CompletableFuture<Void> impostor = CompletableFuture.runAsync(() -> {
                try (Socket s = fake.accept()) {
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    receive(in); // HELLO
                    send(out, ControlProtocol.CHALLENGE, new byte[32]);
                    receive(in); // AUTH
                    send(out, ControlProtocol.ACCEPT, new byte[32]); // cannot compute the real proof
                    s.setSoTimeout(5000);
                    assertEquals(-1, in.read(), "the member must close instead of sending its descriptors");
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try (ControlPlane m = ControlPlane.start(ControlPlaneTest.config(1, 2, fake.getLocalPort())
                .joinTimeout(Duration.ofSeconds(5)).build())) {
                JoinRefusedException e = assertThrows(JoinRefusedException.class,
                    () -> m.join(Map.of("shm", new byte[] {1})));
                assertEquals(JoinRefusedException.Reason.COORDINATOR_NOT_AUTHENTIC, e.reason());
                assertTrue(e.getMessage().contains("could not prove"), e.getMessage());
            }
            impostor.get(5, TimeUnit.SECONDS);
        }
    }
}
