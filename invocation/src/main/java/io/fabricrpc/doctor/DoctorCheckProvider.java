package io.fabricrpc.doctor;

import java.util.List;

/**
 * Checks contributed by a module the invocation module must not depend on (the RDMA transport). Found with
 * {@link java.util.ServiceLoader}; registered in {@code META-INF/services/io.fabricrpc.doctor.DoctorCheckProvider}.
 * Implementations must return within a bounded time and report problems as results, never by throwing.
 */
public interface DoctorCheckProvider {
    /** The checks for {@code context}; a check that does not apply to its transport reports {@link Status#SKIP}. */
    List<CheckResult> checks(DoctorContext context);
}
