package io.fabricrpc.mailbox;

/** A received packet header is inconsistent (length, flags or message length out of range). */
public final class CorruptPacketException extends MailboxException {
    public CorruptPacketException(String message) {
        super(message);
    }
}
