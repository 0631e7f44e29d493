package io.fabricrpc.mailbox;

/** The peer stayed alive but did not hand a port back within the reply timeout. */
public final class MailboxTimeoutException extends MailboxException {
    public MailboxTimeoutException(String message) {
        super(message);
    }
}
