package io.fabricrpc.mailbox;

/** A mailbox operation could not complete: the message says which port, in which state, with which values. */
public class MailboxException extends RuntimeException {
    public MailboxException(String message) {
        super(message);
    }
}
