package io.fabricrpc.api;

/**
 * A {@code callReturn} or {@code callReturnAsync} reached its deadline (the per-call timeout, or
 * {@link FabricConfig#withCallTimeout the call timeout}) before its result arrived. {@link #mayHaveRun()} tells
 * whether the call had left this process: if it had, the function may have run, may be running, or may still run
 * at its destination (as a gRPC {@code DEADLINE_EXCEEDED}); its result, if one comes, is dropped.
 */
public final class DeadlineExceededException extends MessagingException {
    private static final long serialVersionUID = 1L;

    /** True if the call was sent before the deadline passed. */
    private final boolean mayHaveRun;

    /**
     * Creates the exception.
     *
     * @param message what timed out, naming the destination and the deadline
     * @param mayHaveRun true if the call had been sent, so its outcome at the destination is unknown
     */
    public DeadlineExceededException(String message, boolean mayHaveRun) {
        super(message + (mayHaveRun ? " (the call was sent: it may have run, or may still run, at the destination)"
                : " (the call was not sent: it did not run)"));
        this.mayHaveRun = mayHaveRun;
    }

    /** {@return true if the call had been sent, so the function may have run; false if it certainly did not} */
    public boolean mayHaveRun() {
        return mayHaveRun;
    }
}
