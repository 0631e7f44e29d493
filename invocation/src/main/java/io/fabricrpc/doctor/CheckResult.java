package io.fabricrpc.doctor;

import java.util.Objects;

/**
 * One check's result: a stable name, its status, what was observed and the fix in one line (empty when the
 * status is {@link Status#OK} and there is nothing to do).
 */
public record CheckResult(String name, Status status, String observed, String fix) {
    public CheckResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(status, "status");
        observed = observed == null ? "" : observed;
        fix = fix == null ? "" : fix;
    }

    public static CheckResult ok(String name, String observed) {
        return new CheckResult(name, Status.OK, observed, "");
    }

    public static CheckResult skip(String name, String why) {
        return new CheckResult(name, Status.SKIP, why, "");
    }
}
