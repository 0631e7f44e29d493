package io.fabricrpc.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;

/**
 * Lets remote-region handles travel as captures and results (register it:
 * {@code builder.register(RemoteRegion.class, RemoteRegionSerializer::new)}). Writes the handle's fields only,
 * never a transport's cached attachment.
 */
public final class RemoteRegionSerializer extends Serializer<RemoteRegion> {
    public RemoteRegionSerializer() {
        setImmutable(true);
    }

    @Override
    public void write(Kryo kryo, Output output, RemoteRegion region) {
        output.writeLong(region.ownerId());
        output.writeLong(region.regionId());
        output.writeLong(region.address());
        output.writeLong(region.length());
        output.writeInt(region.key());
        output.writeByte(region.access().ordinal());
    }

    @Override
    public RemoteRegion read(Kryo kryo, Input input, Class<? extends RemoteRegion> type) {
        long owner = input.readLong();
        long id = input.readLong();
        long address = input.readLong();
        long length = input.readLong();
        int key = input.readInt();
        int access = input.readByte();
        RemoteAccess[] all = RemoteAccess.values();
        if (access < 0 || access >= all.length || length < 0) {
            throw new SerializationException("corrupt remote region handle: access " + access + ", length " + length);
        }
        return new RemoteRegion(owner, id, address, length, key, all[access]);
    }
}
