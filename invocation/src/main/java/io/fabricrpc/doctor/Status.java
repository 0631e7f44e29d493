package io.fabricrpc.doctor;

/** Outcome of one check, in increasing severity except {@link #SKIP} (not applicable here, never a failure). */
public enum Status {
    OK, WARN, FAIL, SKIP;

    /** Lower-case name used in text and JSON output. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
