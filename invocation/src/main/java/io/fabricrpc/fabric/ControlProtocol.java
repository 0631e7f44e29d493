package io.fabricrpc.fabric;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Wire format of the control channel (one TCP connection per member, to the coordinator). No Java
 * serialization: every message is a length-prefixed frame with a one-byte type, big-endian integers, strings as
 * a u16 byte length plus UTF-8.
 *
 * <pre>
 * frame:   0               4       5
 *          +---------------+-------+----------------------------+
 *          | length (i32)  | type  | body (length - 1 bytes)    |
 *          +---------------+-------+----------------------------+
 *          length counts the bytes after itself; frames over the current limit are rejected (the limit is
 *          HANDSHAKE_MAX_FRAME until the peer is authenticated, MAX_FRAME after).
 *
 * type  name              direction  body
 *  1    HELLO             M -> C     magic i32 | rank i32 | size i32 | threads i32 | flags u8 | nonceM [32]
 *                                    flags bit 0: the member has a job secret
 *  2    CHALLENGE         C -> M     nonceC [32]
 *  3    AUTH              M -> C     macLen u8 (0 or 32) | macM [macLen]
 *  4    ACCEPT            C -> M     macC [32]
 *  5    REFUSE            C -> M     reason u8 | message str          (then the coordinator closes)
 *  6    REGISTER          M -> C     host str | pid i64 | descriptors
 *  7    MEMBERSHIP        C -> M     threads i32 | size i32 | size x (host str | pid i64 | descriptors)
 *  8    HEARTBEAT         both       (empty)
 *  9    PEER_FAILED       C -> M     rank i32 | reason str
 * 10    PEER_LEFT         C -> M     rank i32
 * 11    LEAVE             both       (empty) orderly departure of the sender
 * 12    SHUTDOWN_ARRIVE   M -> C     (empty) the member reached the shutdown barrier
 * 13    SHUTDOWN_RELEASE  C -> M     (empty) every live rank reached it
 *
 * descriptors: count u16 | count x (name str | length i32 | bytes [length])
 *
 * macM = HMAC-SHA256(secret, LABEL | 'M' | rank | size | threads | nonceM | nonceC)
 * macC = HMAC-SHA256(secret, LABEL | 'C' | rank | size | threads | nonceM | nonceC)
 * </pre>
 *
 * Both nonces are fresh per connection (so a recorded AUTH cannot be replayed) and the role byte differs (so a
 * MAC cannot be reflected back to its author). Macs are compared with {@link MessageDigest#isEqual}.
 * The member proves the secret first and the coordinator proves it back in ACCEPT; the member sends its
 * descriptors (REGISTER) only after checking ACCEPT.
 */
final class ControlProtocol {

    static final int MAGIC = 0x46524331; // "FRC1": protocol version 1

    static final byte HELLO = 1;
    static final byte CHALLENGE = 2;
    static final byte AUTH = 3;
    static final byte ACCEPT = 4;
    static final byte REFUSE = 5;
    static final byte REGISTER = 6;
    static final byte MEMBERSHIP = 7;
    static final byte HEARTBEAT = 8;
    static final byte PEER_FAILED = 9;
    static final byte PEER_LEFT = 10;
    static final byte LEAVE = 11;
    static final byte SHUTDOWN_ARRIVE = 12;
    static final byte SHUTDOWN_RELEASE = 13;

    static final int LENGTH_FIELD_BYTES = 4;
    static final int NONCE_BYTES = 32;
    static final int MAC_BYTES = 32;
    static final byte FLAG_HAS_SECRET = 1;

    /** Frame limit before the peer is authenticated: handshake messages are tiny. */
    static final int HANDSHAKE_MAX_FRAME = 1024;
    /** Frame limit after authentication: bounds the membership of a large job. */
    static final int MAX_FRAME = 16 << 20;
    static final int MAX_DESCRIPTORS = 64;
    static final int MAX_DESCRIPTOR_BYTES = 1 << 20;
    static final int MAX_STRING_BYTES = 1024;

    private static final byte[] LABEL = "fabricrpc-join-v1".getBytes(StandardCharsets.US_ASCII);
    private static final String HMAC = "HmacSHA256";

    private ControlProtocol() {
    }

    /** A malformed or unexpected message; the connection is closed. */
    static final class ProtocolException extends RuntimeException {
        ProtocolException(String message) {
            super(message);
        }
    }

    /** Frame decoder whose limit can be raised once the peer is authenticated (event-loop confined). */
    static final class BoundedFrameDecoder extends LengthFieldBasedFrameDecoder {
        private int limit = HANDSHAKE_MAX_FRAME;

        BoundedFrameDecoder() {
            super(MAX_FRAME, 0, LENGTH_FIELD_BYTES, 0, LENGTH_FIELD_BYTES);
        }

        void authenticated() {
            limit = MAX_FRAME;
        }

        @Override
        protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, ByteOrder order) {
            long frame = super.getUnadjustedFrameLength(buf, offset, length, order);
            if (frame > limit || frame < 1) {
                throw new TooLongFrameException("control frame of " + frame + " bytes outside [1, " + limit + "]");
            }
            return frame;
        }
    }

    // ------------------------------------------------------------ encoding (type + body; the prepender adds length)

    static ByteBuf empty(ByteBufAllocator alloc, byte type) {
        return alloc.buffer(1).writeByte(type);
    }

    static ByteBuf hello(ByteBufAllocator alloc, int rank, int size, int threads, boolean hasSecret, byte[] nonceM) {
        return alloc.buffer(1 + 17 + NONCE_BYTES).writeByte(HELLO).writeInt(MAGIC).writeInt(rank).writeInt(size)
            .writeInt(threads).writeByte(hasSecret ? FLAG_HAS_SECRET : 0).writeBytes(nonceM);
    }

    static ByteBuf challenge(ByteBufAllocator alloc, byte[] nonceC) {
        return alloc.buffer(1 + NONCE_BYTES).writeByte(CHALLENGE).writeBytes(nonceC);
    }

    static ByteBuf auth(ByteBufAllocator alloc, byte[] macOrNull) {
        ByteBuf b = alloc.buffer(2 + MAC_BYTES).writeByte(AUTH);
        if (macOrNull == null) {
            return b.writeByte(0);
        }
        return b.writeByte(macOrNull.length).writeBytes(macOrNull);
    }

    static ByteBuf accept(ByteBufAllocator alloc, byte[] macC) {
        return alloc.buffer(1 + MAC_BYTES).writeByte(ACCEPT).writeBytes(macC);
    }

    static ByteBuf refuse(ByteBufAllocator alloc, JoinRefusedException.Reason reason, String message) {
        ByteBuf b = alloc.buffer().writeByte(REFUSE).writeByte(reason.ordinal());
        writeString(b, truncate(message, 400));
        return b;
    }

    static ByteBuf register(ByteBufAllocator alloc, String host, long pid, Map<String, byte[]> descriptors) {
        ByteBuf b = alloc.buffer().writeByte(REGISTER);
        writeString(b, host);
        b.writeLong(pid);
        writeDescriptors(b, descriptors);
        return b;
    }

    static ByteBuf membership(ByteBufAllocator alloc, Membership m) {
        ByteBuf b = alloc.buffer().writeByte(MEMBERSHIP).writeInt(m.threadsPerProcess()).writeInt(m.size());
        for (Membership.Member member : m.members()) {
            writeString(b, member.host());
            b.writeLong(member.pid());
            writeDescriptors(b, member.descriptorsNoCopy());
        }
        return b;
    }

    static ByteBuf peerFailed(ByteBufAllocator alloc, int rank, String reason) {
        ByteBuf b = alloc.buffer().writeByte(PEER_FAILED).writeInt(rank);
        writeString(b, truncate(reason, 400));
        return b;
    }

    static ByteBuf peerLeft(ByteBufAllocator alloc, int rank) {
        return alloc.buffer(5).writeByte(PEER_LEFT).writeInt(rank);
    }

    // ------------------------------------------------------------ decoding (the type byte is already consumed)

    record Hello(int magic, int rank, int size, int threads, boolean hasSecret, byte[] nonceM) {
    }

    static Hello readHello(ByteBuf b) {
        need(b, 17 + NONCE_BYTES, "HELLO");
        Hello h = new Hello(b.readInt(), b.readInt(), b.readInt(), b.readInt(),
            (b.readByte() & FLAG_HAS_SECRET) != 0, readBytes(b, NONCE_BYTES));
        end(b, "HELLO");
        return h;
    }

    static byte[] readNonce(ByteBuf b, String what) {
        need(b, NONCE_BYTES, what);
        byte[] n = readBytes(b, NONCE_BYTES);
        end(b, what);
        return n;
    }

    /** AUTH body: the MAC, or null if the member has no secret. */
    static byte[] readAuth(ByteBuf b) {
        need(b, 1, "AUTH");
        int len = b.readUnsignedByte();
        if (len != 0 && len != MAC_BYTES) {
            throw new ProtocolException("AUTH mac length " + len + ", expected 0 or " + MAC_BYTES);
        }
        need(b, len, "AUTH");
        byte[] mac = len == 0 ? null : readBytes(b, len);
        end(b, "AUTH");
        return mac;
    }

    static byte[] readAccept(ByteBuf b) {
        need(b, MAC_BYTES, "ACCEPT");
        byte[] mac = readBytes(b, MAC_BYTES);
        end(b, "ACCEPT");
        return mac;
    }

    record Refuse(JoinRefusedException.Reason reason, String message) {
    }

    static Refuse readRefuse(ByteBuf b) {
        need(b, 1, "REFUSE");
        int code = b.readUnsignedByte();
        JoinRefusedException.Reason[] reasons = JoinRefusedException.Reason.values();
        JoinRefusedException.Reason reason = code < reasons.length ? reasons[code] : JoinRefusedException.Reason.PROTOCOL;
        return new Refuse(reason, readString(b, "REFUSE"));
    }

    record Register(String host, long pid, Map<String, byte[]> descriptors) {
    }

    static Register readRegister(ByteBuf b) {
        String host = readString(b, "REGISTER");
        need(b, 8, "REGISTER");
        long pid = b.readLong();
        Map<String, byte[]> d = readDescriptors(b, "REGISTER");
        end(b, "REGISTER");
        return new Register(host, pid, d);
    }

    static Membership readMembership(ByteBuf b) {
        need(b, 8, "MEMBERSHIP");
        int threads = b.readInt();
        int size = b.readInt();
        if (size < 1 || threads < 1) {
            throw new ProtocolException("MEMBERSHIP with size " + size + " and threads " + threads);
        }
        List<Membership.Member> members = new ArrayList<>(Math.min(size, 4096));
        for (int r = 0; r < size; r++) {
            String host = readString(b, "MEMBERSHIP");
            need(b, 8, "MEMBERSHIP");
            long pid = b.readLong();
            members.add(new Membership.Member(r, host, pid, readDescriptors(b, "MEMBERSHIP")));
        }
        end(b, "MEMBERSHIP");
        return new Membership(threads, members);
    }

    record PeerFailed(int rank, String reason) {
    }

    static PeerFailed readPeerFailed(ByteBuf b) {
        int rank = readRank(b, "PEER_FAILED");
        String reason = readString(b, "PEER_FAILED");
        end(b, "PEER_FAILED");
        return new PeerFailed(rank, reason);
    }

    static int readRank(ByteBuf b, String what) {
        need(b, 4, what);
        return b.readInt();
    }

    // ------------------------------------------------------------ authentication

    static byte[] mac(byte[] secret, byte role, int rank, int size, int threads, byte[] nonceM, byte[] nonceC) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(secret, HMAC));
            mac.update(LABEL);
            mac.update(role);
            mac.update(intBytes(rank));
            mac.update(intBytes(size));
            mac.update(intBytes(threads));
            mac.update(nonceM);
            return mac.doFinal(nonceC);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 unavailable", e);
        }
    }

    /** Constant-time comparison. */
    static boolean macMatches(byte[] expected, byte[] actual) {
        return actual != null && MessageDigest.isEqual(expected, actual);
    }

    // ------------------------------------------------------------ helpers

    static void validateDescriptors(Map<String, byte[]> descriptors) {
        if (descriptors.size() > MAX_DESCRIPTORS) {
            throw new IllegalArgumentException(descriptors.size() + " transport descriptors, at most "
                + MAX_DESCRIPTORS + " allowed");
        }
        descriptors.forEach((name, bytes) -> {
            if (name == null || name.isEmpty() || name.getBytes(StandardCharsets.UTF_8).length > MAX_STRING_BYTES) {
                throw new IllegalArgumentException("transport name '" + name + "' empty or too long");
            }
            if (bytes == null || bytes.length > MAX_DESCRIPTOR_BYTES) {
                throw new IllegalArgumentException("descriptor of '" + name + "' is "
                    + (bytes == null ? "null" : bytes.length + " bytes, at most " + MAX_DESCRIPTOR_BYTES));
            }
        });
    }

    private static void writeDescriptors(ByteBuf b, Map<String, byte[]> descriptors) {
        b.writeShort(descriptors.size());
        descriptors.forEach((name, bytes) -> {
            writeString(b, name);
            b.writeInt(bytes.length).writeBytes(bytes);
        });
    }

    private static Map<String, byte[]> readDescriptors(ByteBuf b, String what) {
        need(b, 2, what);
        int count = b.readUnsignedShort();
        if (count > MAX_DESCRIPTORS) {
            throw new ProtocolException(what + " carries " + count + " descriptors, at most " + MAX_DESCRIPTORS);
        }
        Map<String, byte[]> d = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            String name = readString(b, what);
            need(b, 4, what);
            int len = b.readInt();
            if (len < 0 || len > MAX_DESCRIPTOR_BYTES) {
                throw new ProtocolException(what + " descriptor '" + name + "' of " + len + " bytes");
            }
            need(b, len, what);
            d.put(name, readBytes(b, len));
        }
        return d;
    }

    private static void writeString(ByteBuf b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("string of " + bytes.length + " bytes exceeds " + MAX_STRING_BYTES);
        }
        b.writeShort(bytes.length).writeBytes(bytes);
    }

    private static String readString(ByteBuf b, String what) {
        need(b, 2, what);
        int len = b.readUnsignedShort();
        if (len > MAX_STRING_BYTES) {
            throw new ProtocolException(what + " string of " + len + " bytes");
        }
        need(b, len, what);
        return new String(readBytes(b, len), StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(ByteBuf b, int n) {
        byte[] out = new byte[n];
        b.readBytes(out);
        return out;
    }

    private static void need(ByteBuf b, int n, String what) {
        if (b.readableBytes() < n) {
            throw new ProtocolException(what + " truncated: need " + n + " more bytes, have " + b.readableBytes());
        }
    }

    static void end(ByteBuf b, String what) {
        if (b.isReadable()) {
            throw new ProtocolException(what + " has " + b.readableBytes() + " trailing bytes");
        }
    }

    private static byte[] intBytes(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    private static String truncate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }
}
