package io.fabricrpc.doctor;

import java.util.List;

/** Thrown by {@link JoinChecks#verify} when this machine cannot run the job; the message names every fix. */
public final class JoinCheckException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient List<CheckResult> failures;

    JoinCheckException(String message, List<CheckResult> failures) {
        super(message);
        this.failures = List.copyOf(failures);
    }

    /** The failing checks, in the order they ran. */
    public List<CheckResult> failures() {
        return failures;
    }
}
