package io.fabricrpc.fabric;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Fuzzes the control channel's decoding of what a peer sent over TCP: the byte stream through
 * {@link ControlProtocol.BoundedFrameDecoder} (handshake limit, or the raised one when the input's first byte is odd),
 * then every frame's body through the reader of its type byte, as {@link Member} and {@link Coordinator} dispatch.
 * Documented outcomes: a decoded message, a {@link ControlProtocol.ProtocolException} (connection closed), or a
 * {@link DecoderException} from the frame decoder (a {@code TooLongFrameException} for a length outside the limit).
 */
@ExtendWith(ClassVersionShim.class)
class ControlProtocolFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED =
            List.of(ControlProtocol.ProtocolException.class, DecoderException.class);

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void frames(byte[] input) {
        if (input.length == 0) {
            return;
        }
        ControlProtocol.BoundedFrameDecoder decoder = new ControlProtocol.BoundedFrameDecoder();
        if ((input[0] & 1) != 0) {
            decoder.authenticated();
        }
        EmbeddedChannel channel = new EmbeddedChannel(decoder);
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(input, 1, input.length - 1));
            for (ByteBuf frame = channel.readInbound(); frame != null; frame = channel.readInbound()) {
                try {
                    decodeFrame(frame);
                } finally {
                    frame.release();
                }
            }
        } catch (Throwable e) {
            FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
        } finally {
            try {
                channel.finishAndReleaseAll(); // rethrows what the decoder raised on the last bytes, if not yet
            } catch (Throwable e) {
                FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
            }
        }
    }

    /** What the channel handlers do with one frame (the decoder guarantees at least the type byte). */
    private static Object decodeFrame(ByteBuf in) {
        byte type = in.readByte();
        return switch (type) {
            case ControlProtocol.HELLO -> ControlProtocol.readHello(in);
            case ControlProtocol.CHALLENGE -> ControlProtocol.readNonce(in, "CHALLENGE");
            case ControlProtocol.AUTH -> ControlProtocol.readAuth(in);
            case ControlProtocol.ACCEPT -> ControlProtocol.readAccept(in);
            case ControlProtocol.REFUSE -> ControlProtocol.readRefuse(in);
            case ControlProtocol.REGISTER -> ControlProtocol.readRegister(in);
            case ControlProtocol.MEMBERSHIP -> ControlProtocol.readMembership(in);
            case ControlProtocol.PEER_FAILED -> ControlProtocol.readPeerFailed(in);
            case ControlProtocol.PEER_LEFT -> {
                int rank = ControlProtocol.readRank(in, "PEER_LEFT");
                ControlProtocol.end(in, "PEER_LEFT");
                yield rank;
            }
            default -> {
                ControlProtocol.end(in, "message type " + type);
                yield type;
            }
        };
    }

    /** Valid frames from the real encoders, length-prefixed as on the wire, a handshake's and a running job's. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/fabric/ControlProtocolFuzzTestInputs/frames");
        ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
        byte[] nonce = new byte[ControlProtocol.NONCE_BYTES];
        byte[] mac = ControlProtocol.mac(new byte[] {1, 2, 3}, (byte) 'M', 1, 2, 1, nonce, nonce);
        Map<String, byte[]> descriptors = Map.of("shm", new byte[] {1, 2, 3, 4});
        Membership membership = new Membership(2, List.of(new Membership.Member(0, "h0", 10, descriptors),
                new Membership.Member(1, "h1", 11, Map.of())));
        writeSeed(dir, "handshake", 0, List.of(ControlProtocol.hello(alloc, 1, 2, 1, true, nonce),
                ControlProtocol.challenge(alloc, nonce), ControlProtocol.auth(alloc, mac),
                ControlProtocol.auth(alloc, null), ControlProtocol.accept(alloc, mac),
                ControlProtocol.refuse(alloc, JoinRefusedException.Reason.BAD_RANK, "no")));
        writeSeed(dir, "running", 1, List.of(ControlProtocol.register(alloc, "host", 42, descriptors),
                ControlProtocol.membership(alloc, membership), ControlProtocol.peerFailed(alloc, 1, "gone"),
                ControlProtocol.peerLeft(alloc, 1), ControlProtocol.empty(alloc, ControlProtocol.HEARTBEAT),
                ControlProtocol.empty(alloc, ControlProtocol.LEAVE)));
    }

    private static void writeSeed(Path dir, String name, int firstByte, List<ByteBuf> frames) {
        List<Byte> bytes = new ArrayList<>();
        bytes.add((byte) firstByte);
        for (ByteBuf frame : frames) {
            int length = frame.readableBytes();
            for (int shift = 24; shift >= 0; shift -= 8) {
                bytes.add((byte) (length >>> shift));
            }
            while (frame.isReadable()) {
                bytes.add(frame.readByte());
            }
            frame.release();
        }
        byte[] out = new byte[bytes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = bytes.get(i);
        }
        FuzzSupport.writeSeed(dir, name, out);
    }
}
