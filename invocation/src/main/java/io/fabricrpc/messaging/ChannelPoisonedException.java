package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

/**
 * The receiver dropped this channel ({@link PoisonReason}) after running {@link #ranBeforePoisoning()} of its
 * records: the {@link #notRun()} calls accepted here after that point will never run, and no later call is accepted.
 */
public final class ChannelPoisonedException extends MessagingException {
    private static final long serialVersionUID = 1L;

    private final long sender;
    private final long receiver;
    private final int reasonCode;
    private final long ran;
    private final long accepted;
    private final String text;

    public ChannelPoisonedException(long sender, long receiver, int reasonCode, long ran, long accepted, String text) {
        super("receiver thread " + ThreadNames.of(receiver) + " (rank " + (receiver >>> 32) + ", thread "
                + ((int) receiver & 0xF_FFFF) + ") dropped the channel from thread " + ThreadNames.of(sender) + ": " + describe(reasonCode)
                + " after running " + ran + " of its calls; " + Math.max(0, accepted - ran) + " of the " + accepted
                + " calls accepted here were not run" + (text.isEmpty() ? "" : " (" + text + ")"));
        this.sender = sender;
        this.receiver = receiver;
        this.reasonCode = reasonCode;
        this.ran = ran;
        this.accepted = accepted;
        this.text = text;
    }

    /** The same verdict for a layer that accepted {@code accepted} calls in all (its queued ones never run either). */
    public ChannelPoisonedException withAccepted(long accepted) {
        return accepted == this.accepted ? this
                : new ChannelPoisonedException(sender, receiver, reasonCode, ran, accepted, text);
    }

    private static String describe(int code) {
        PoisonReason reason = PoisonReason.of(code);
        return (reason == null ? "reason" : reason.name()) + " (code " + code + ")";
    }

    /** The destination thread that dropped the channel. */
    public long receiverThread() {
        return receiver;
    }

    /** The receiver's reason, or null if this version does not know its code ({@link #reasonCode()}). */
    public PoisonReason reason() {
        return PoisonReason.of(reasonCode);
    }

    public int reasonCode() {
        return reasonCode;
    }

    /** Records the receiver ran (or consumed as failed calls) before the poisoning point. */
    public long ranBeforePoisoning() {
        return ran;
    }

    /** Calls accepted on this channel and not run: the poisoning record and everything after it. */
    public long notRun() {
        return Math.max(0, accepted - ran);
    }
}
