package io.fabricrpc.api;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A handle to a peer's {@link LocalRegion}: everything a writer needs to address it, and nothing more.
 * Value-like (equality by the encoded fields); the transport may cache a private attachment on it (a mapping
 * of the peer's file, say) so that the hot path resolves a handle once.
 *
 * <pre>
 * Encoded form, little-endian, {@link #ENCODED_LENGTH} bytes:
 *  0                   8                   16                  24                  32        36        40
 *  +-------------------+-------------------+-------------------+-------------------+---------+---------+
 *  | owner endpoint id | region id         | address           | length            | key     | access  |
 *  +-------------------+-------------------+-------------------+-------------------+---------+---------+
 *  owner endpoint id: the transport endpoint that allocated the region
 *  region id:         unique per owner endpoint
 *  address:           base the transport addresses the region by (RDMA virtual address; 0 under shm)
 *  key:               remote key (RDMA rkey; 0 under shm)
 *  access:            RemoteAccess ordinal granted to peers
 * </pre>
 */
public final class RemoteRegion {
    /** Offset of the owner endpoint id (a {@code long}) in the encoded form. */
    public static final int OWNER_OFFSET = 0;
    /** Offset of the region id (a {@code long}) in the encoded form. */
    public static final int REGION_ID_OFFSET = 8;
    /** Offset of the address (a {@code long}) in the encoded form. */
    public static final int ADDRESS_OFFSET = 16;
    /** Offset of the length (a {@code long}) in the encoded form. */
    public static final int LENGTH_OFFSET = 24;
    /** Offset of the remote key (an {@code int}) in the encoded form. */
    public static final int KEY_OFFSET = 32;
    /** Offset of the access ordinal (an {@code int}) in the encoded form. */
    public static final int ACCESS_OFFSET = 36;
    /** Bytes of the encoded form. */
    public static final int ENCODED_LENGTH = 40;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final VarHandle ATTACHMENT;

    static {
        try {
            ATTACHMENT = MethodHandles.lookup().findVarHandle(RemoteRegion.class, "attachment", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long ownerId;
    private final long regionId;
    private final long address;
    private final long length;
    private final int key;
    private final RemoteAccess access;
    @SuppressWarnings("unused") // accessed through ATTACHMENT
    private Object attachment;

    /**
     * Creates a handle.
     *
     * @param ownerId the transport endpoint that allocated the region
     * @param regionId the region's id, unique per owner endpoint
     * @param address base the transport addresses the region by (RDMA virtual address; 0 under shm)
     * @param length the region's size in bytes, {@code >= 0}
     * @param key remote key (RDMA rkey; 0 under shm)
     * @param access what peers may do to the region
     * @throws IllegalArgumentException if {@code length} is negative
     */
    public RemoteRegion(long ownerId, long regionId, long address, long length, int key, RemoteAccess access) {
        if (length < 0) {
            throw new IllegalArgumentException("remote region length must be >= 0, got " + length);
        }
        this.ownerId = ownerId;
        this.regionId = regionId;
        this.address = address;
        this.length = length;
        this.key = key;
        this.access = access;
    }

    /** {@return the transport endpoint that allocated the region} */
    public long ownerId() {
        return ownerId;
    }

    /** {@return the region's id, unique per owner endpoint} */
    public long regionId() {
        return regionId;
    }

    /** {@return the base the transport addresses the region by (RDMA virtual address; 0 under shm)} */
    public long address() {
        return address;
    }

    /** {@return the region's size in bytes} */
    public long length() {
        return length;
    }

    /** {@return the remote key (RDMA rkey; 0 under shm)} */
    public int key() {
        return key;
    }

    /** {@return what peers may do to the region} */
    public RemoteAccess access() {
        return access;
    }

    /**
     * Writes the encoded form at {@code offset}.
     *
     * @param dst the segment to write into; {@link #ENCODED_LENGTH} bytes from {@code offset}
     * @param offset byte offset in {@code dst}
     */
    public void encode(MemorySegment dst, long offset) {
        dst.set(LONG, offset + OWNER_OFFSET, ownerId);
        dst.set(LONG, offset + REGION_ID_OFFSET, regionId);
        dst.set(LONG, offset + ADDRESS_OFFSET, address);
        dst.set(LONG, offset + LENGTH_OFFSET, length);
        dst.set(INT, offset + KEY_OFFSET, key);
        dst.set(INT, offset + ACCESS_OFFSET, access.ordinal());
    }

    /**
     * Reads an encoded handle; a corrupt access field is an {@link IllegalArgumentException} naming it.
     *
     * @param src the segment holding the encoded form
     * @param offset byte offset of the encoded form in {@code src}
     * @return the decoded handle
     */
    public static RemoteRegion decode(MemorySegment src, long offset) {
        int accessOrdinal = src.get(INT, offset + ACCESS_OFFSET);
        RemoteAccess[] all = RemoteAccess.values();
        if (accessOrdinal < 0 || accessOrdinal >= all.length) {
            throw new IllegalArgumentException("corrupt remote region handle: access field " + accessOrdinal);
        }
        return new RemoteRegion(src.get(LONG, offset + OWNER_OFFSET), src.get(LONG, offset + REGION_ID_OFFSET),
                src.get(LONG, offset + ADDRESS_OFFSET), src.get(LONG, offset + LENGTH_OFFSET),
                src.get(INT, offset + KEY_OFFSET), all[accessOrdinal]);
    }

    /**
     * {@return the transport-private cache, or null if none is attached} Read with acquire so a published attachment
     * is seen fully built.
     */
    public Object attachment() {
        return ATTACHMENT.getAcquire(this);
    }

    /**
     * Publishes a transport-private attachment (release: its fields are visible to any thread that reads it).
     *
     * @param value the attachment, replacing any earlier one
     */
    public void attach(Object value) {
        ATTACHMENT.setRelease(this, value);
    }

    /**
     * Checks that {@code [offset, offset + bytes)} lies inside the region; the message names every value.
     *
     * @param operation the operation to name in the message, e.g. {@code "write"}
     * @param offset byte offset in the region
     * @param bytes number of bytes
     * @throws TransportException if the range is negative or does not lie inside the region
     */
    public void checkRange(String operation, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > length - bytes) {
            throw new TransportException(operation + " out of range: offset " + offset + " + " + bytes
                    + " bytes exceeds remote region " + regionId + " of endpoint " + Long.toHexString(ownerId)
                    + " (length " + length + ")");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemoteRegion r && r.ownerId == ownerId && r.regionId == regionId
                && r.address == address && r.length == length && r.key == key && r.access == access;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(ownerId * 31 + regionId);
    }

    @Override
    public String toString() {
        return "RemoteRegion[owner=" + Long.toHexString(ownerId) + ", id=" + regionId + ", length=" + length
                + ", access=" + access + "]";
    }
}
