package io.fabricrpc.api;

/**
 * What peers may do to a {@link LocalRegion}. Regions get the minimum a protocol needs: a staging area that is
 * only ever a write source needs {@link #NONE}; a mailbox that peers write into needs {@link #WRITE}.
 */
public enum RemoteAccess {
    /** Local use only (still usable as the source of writes and the target of reads). */
    NONE,
    /** Peers may write into the region. */
    WRITE,
    /** Peers may read the region. */
    READ,
    /** Peers may read and write the region. */
    READ_WRITE;

    /** {@return true if peers may write into the region ({@link #WRITE} or {@link #READ_WRITE})} */
    public boolean allowsWrite() {
        return this == WRITE || this == READ_WRITE;
    }

    /** {@return true if peers may read the region ({@link #READ} or {@link #READ_WRITE})} */
    public boolean allowsRead() {
        return this == READ || this == READ_WRITE;
    }
}
