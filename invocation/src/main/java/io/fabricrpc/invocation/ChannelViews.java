package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.messaging.SendingAgent;
import io.fabricrpc.transport.Transport;

/**
 * The runtime's seam for layers that build views over a fabric (aggregation, benchmark columns): a view whose
 * one-sided calls go through channels a {@link ChannelFactory} builds, and what such a layer needs of the process
 * (its transport, its background agent, the shutdown signals a worker received). The one place that finds the runtime
 * behind a {@link Fabric}, so no layer casts to the runtime's classes.
 */
public final class ChannelViews {
    private final FabricRuntime runtime;

    private ChannelViews(FabricRuntime runtime) {
        this.runtime = runtime;
    }

    /**
     * The seam of the fabric {@code fabric} is, or is a view of.
     *
     * @throws IllegalArgumentException if {@code fabric} did not come from {@link Fabric#join} (or a view of one)
     */
    public static ChannelViews of(Fabric fabric) {
        if (fabric instanceof FabricRuntime runtime) {
            return new ChannelViews(runtime);
        }
        if (fabric instanceof FabricView view) {
            return new ChannelViews(view.runtime());
        }
        throw new IllegalArgumentException("views need the fabric returned by Fabric.join (or a view of it), got "
                + fabric);
    }

    /** A view whose one-sided call primitives go through channels made by {@code factory}. */
    public Fabric view(ChannelFactory factory) {
        return runtime.view(factory);
    }

    /** The process's transport: memory a view's channels can send from. */
    public Transport transport() {
        return runtime.transport();
    }

    /** The process's one background agent: where a layer puts its timer work. */
    public SendingAgent agent() {
        return runtime.sendingAgent();
    }

    /** Shutdown signals the calling worker has received so far. */
    public long shutdownSignalsReceived() {
        return runtime.shutdownSignalsReceived();
    }

    /** Runs the calling worker's incoming calls once. */
    public int processCalls() {
        return runtime.processCalls();
    }

    /**
     * Flushes the calling thread's channels of {@code view} and sends each destination the one-way shutdown signal.
     *
     * @throws IllegalArgumentException if {@code view} is not a view made through {@link #view}
     */
    public static void shutdownChannels(Fabric view) {
        viewOf(view).shutdownChannels();
    }

    /** Bytes the calling thread's channels of {@code view} hold locally. */
    public static long bufferedBytes(Fabric view) {
        return viewOf(view).bufferedBytes();
    }

    private static FabricView viewOf(Fabric view) {
        if (!(view instanceof FabricView made)) {
            throw new IllegalArgumentException("not a view made through ChannelViews.view: " + view);
        }
        return made;
    }
}
