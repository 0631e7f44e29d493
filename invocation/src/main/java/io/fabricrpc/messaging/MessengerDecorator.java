package io.fabricrpc.messaging;

import io.fabricrpc.transport.Link;

/**
 * A channel that adds a mechanism on top of one {@link Messenger} (an asynchronous queue, an aggregator): what does
 * not depend on the mechanism goes to the messenger. Subclasses say which thread may touch the messenger when.
 */
public abstract class MessengerDecorator implements RecordChannel {
    protected final Messenger messenger;

    protected MessengerDecorator(Messenger messenger) {
        this.messenger = messenger;
    }

    /** The messenger underneath. */
    public final Messenger messenger() {
        return messenger;
    }

    @Override
    public long consumedRecords() {
        return messenger.consumedRecords();
    }

    /** The messenger's verdict, counting the calls this layer accepted and holds among those not run. */
    @Override
    public void checkPoisoned() {
        try {
            messenger.checkPoisoned();
        } catch (ChannelPoisonedException e) {
            throw e.withAccepted(recordsSent()); // the sending thread, holding no drain claim: the callers say so
        }
    }

    @Override
    public long failedRecords() {
        return messenger.failedRecords();
    }

    @Override
    public String latestFailure() {
        return messenger.latestFailure();
    }

    @Override
    public long lastTicket() {
        return messenger.lastTicket();
    }

    @Override
    public Link link() {
        return messenger.link();
    }

    @Override
    public long destination() {
        return messenger.destination();
    }

    /** The messenger's waiting flag: thread-safe on its own, so no decorator takes a lock for it. */
    @Override
    public void publishDeferred() {
        messenger.publishDeferred();
    }
}
