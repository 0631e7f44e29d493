package io.fabricrpc.fabric;

import static io.fabricrpc.fabric.ControlProtocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * Rank 0's end of one control connection: its protocol state, and where each frame goes in that state. Until the
 * connection is REGISTERED {@link Admission} drives it; once RUNNING its frames are the member's heartbeats, leave and
 * shutdown arrival, and its loss or a protocol error makes the {@link Coordinator} declare the member failed. DONE is
 * final: nothing read afterwards counts. Confined to the event loop.
 */
final class ControlConnection extends SimpleChannelInboundHandler<ByteBuf> {

    private static final Log LOG = Log.of(Coordinator.class); // the coordinator's lines, under its logger name

    enum State { HELLO, AUTH, REGISTER, REGISTERED, RUNNING, DONE }

    // Final, set on the event loop as the channel is initialised.
    private final Coordinator owner;
    private final Admission admission;
    private final ControlPlane cp;
    final BoundedFrameDecoder decoder = new BoundedFrameDecoder();

    // Event loop only.
    State state = State.HELLO;
    Channel ch;
    String remote = "?";
    int rank = -1;
    boolean left;
    // The handshake's, written by Admission.
    Hello hello;
    byte[] nonceC;
    ScheduledFuture<?> handshakeTimer;
    // The failure detector's clock: when this member was last heard from.
    long lastSeenNanos;

    ControlConnection(Coordinator owner, Admission admission, ControlPlane cp) {
        this.owner = owner;
        this.admission = admission;
        this.cp = cp;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ch = ctx.channel();
        remote = String.valueOf(ch.remoteAddress());
        if (!owner.connected(this)) {
            ch.close();
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf in) {
        if (state == State.DONE) {
            return;
        }
        byte type = in.readByte();
        try {
            switch (state) {
                case HELLO -> admission.onHello(this, type, in);
                case AUTH -> admission.onAuth(this, type, in);
                case REGISTER -> admission.onRegister(this, type, in);
                case REGISTERED -> {
                    if (type != LEAVE) {
                        throw new ProtocolException("unexpected message type " + type + " before the job formed");
                    }
                    state = State.DONE;
                    ch.close();
                }
                case RUNNING -> onRunning(type, in);
                default -> { }
            }
        } catch (ProtocolException e) {
            protocolError(e.getMessage());
        }
    }

    private void onRunning(byte type, ByteBuf in) {
        lastSeenNanos = System.nanoTime();
        switch (type) {
            case HEARTBEAT -> cp.counters.heartbeatsReceived++; // event loop
            case LEAVE -> {
                left = true;
                state = State.DONE;
                owner.memberLeft(rank);
                ch.close();
            }
            case SHUTDOWN_ARRIVE -> owner.arrivedAtBarrier(rank);
            default -> throw new ProtocolException("unexpected message type " + type + " from rank " + rank);
        }
    }

    void refuse(JoinRefusedException.Reason reason, String message) {
        admission.refuse(this, reason, message);
    }

    private void protocolError(String message) {
        if (state == State.RUNNING) {
            owner.declareFailed(rank, "protocol error on its control connection: " + message);
        } else if (state != State.DONE && state != State.REGISTERED) {
            refuse(JoinRefusedException.Reason.PROTOCOL, "coordinator " + owner.serverAddress()
                + " refused the connection: " + message);
        } else {
            admission.releaseClaim(this);
            state = State.DONE;
            ch.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        owner.disconnected(this);
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        if (state == State.RUNNING && !left && !owner.isReleased() && !owner.isClosing()) {
            state = State.DONE;
            owner.declareFailed(rank, "control connection from " + remote
                + " closed without leave (process exited or crashed)");
        } else if (!owner.isClosing()) {
            admission.releaseClaim(this);
        }
        state = State.DONE;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("coordinator: error on connection from {} (rank {})", remote, rank, cause);
        if (state == State.RUNNING && !owner.isClosing()) {
            owner.declareFailed(rank, "control connection error: " + cause);
        } else if (state.compareTo(State.REGISTERED) < 0) {
            protocolError(String.valueOf(cause.getMessage()));
            return;
        }
        ctx.close();
    }
}
