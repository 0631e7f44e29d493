package io.fabricrpc.api;

/**
 * A {@link Fabric#barrier} or {@link Fabric#allReduceSum} was not released within its timeout. The message names
 * the barrier's generation, the number of workers and, at the coordinating worker, which ones had not arrived.
 * The job's barriers cannot be used after one failed: the workers no longer agree on the generation.
 */
public class BarrierTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what timed out: generation, workers, the ones missing
     */
    public BarrierTimeoutException(String message) {
        super(message);
    }
}
