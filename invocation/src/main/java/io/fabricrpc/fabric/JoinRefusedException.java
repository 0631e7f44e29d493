package io.fabricrpc.fabric;

/**
 * The coordinator refused to let this process into the job, or this process refused a coordinator that could
 * not prove the job secret. Never retried automatically: the configuration must be fixed.
 */
public class JoinRefusedException extends SecurityException {

    /** Why a join was refused. */
    public enum Reason {
        /** The joiner's proof did not match the job secret. */
        WRONG_SECRET,
        /** The joiner has no job secret configured. */
        MISSING_SECRET,
        /** The coordinator could not prove the job secret to the joiner. */
        COORDINATOR_NOT_AUTHENTIC,
        /** The claimed rank is negative, zero (the coordinator's own) or not below the job size. */
        BAD_RANK,
        /** Another authenticated process already holds the claimed rank. */
        DUPLICATE_RANK,
        /** Job size or threads per process differ from the coordinator's. */
        CONFIG_MISMATCH,
        /** The membership has already been handed out. */
        JOB_ALREADY_FORMED,
        /** Malformed, unexpected or oversize handshake message, or wrong protocol version. */
        PROTOCOL,
        /** Another rank was refused (secret or configuration) and no valid join of it followed: the job cannot form. */
        JOB_ABORTED
    }

    private final Reason reason;
    private final int claimedRank;

    public JoinRefusedException(Reason reason, int claimedRank, String message) {
        super(message);
        this.reason = reason;
        this.claimedRank = claimedRank;
    }

    /** Why the join was refused. */
    public Reason reason() {
        return reason;
    }

    /** The rank the joiner claimed. */
    public int claimedRank() {
        return claimedRank;
    }
}
