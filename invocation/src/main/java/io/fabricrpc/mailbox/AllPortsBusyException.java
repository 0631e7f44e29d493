package io.fabricrpc.mailbox;

/** Every port stayed locked (or awaited an earlier asynchronous call's reply) for the whole open timeout. */
public final class AllPortsBusyException extends MailboxException {
    public AllPortsBusyException(String message) {
        super(message);
    }
}
