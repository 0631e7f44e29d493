package io.fabricrpc.invocation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.messaging.RecordChannel;

/**
 * Makes the channels of a {@linkplain FabricRuntime#view fabric view}: given the messenger a sender thread
 * gets for one destination, returns the channel its calls go through (an aggregator, say).
 */
public interface ChannelFactory {
    /** The messenger settings this view needs, derived from the job's. */
    default MessengerConfig messengerConfig(MessengerConfig jobDefault) {
        return jobDefault;
    }

    /** Wraps a new messenger (owned by one sender thread) into the view's channel. */
    RecordChannel wrap(Messenger messenger);
}
