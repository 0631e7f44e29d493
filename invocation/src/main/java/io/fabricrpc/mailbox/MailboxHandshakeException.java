package io.fabricrpc.mailbox;

/** Setting up a mailbox channel failed: refused, timed out, or an unexpected message arrived. */
public final class MailboxHandshakeException extends MailboxException {
    public MailboxHandshakeException(String message) {
        super(message);
    }
}
