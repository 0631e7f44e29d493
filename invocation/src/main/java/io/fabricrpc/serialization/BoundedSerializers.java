package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.serializers.CollectionSerializer;
import com.esotericsoftware.kryo.serializers.DefaultArraySerializers;
import com.esotericsoftware.kryo.serializers.MapSerializer;

import java.util.Collection;
import java.util.Map;

/**
 * Kryo's default collection, map and object-array serializers preallocate the size read from the record. These
 * variants first check that the size can fit in the bytes left (every element takes at least one byte), so a
 * corrupt or hostile record fails with a {@link KryoException} instead of making the receiver allocate gigabytes.
 * Installed as default serializers by {@link SerializationRegistry}, so they apply to every registered collection,
 * map and object array without an explicit serializer.
 */
final class BoundedSerializers {
    private BoundedSerializers() {
    }

    static void install(Kryo kryo) {
        kryo.addDefaultSerializer(Collection.class, BoundedCollectionSerializer.class);
        kryo.addDefaultSerializer(Map.class, BoundedMapSerializer.class);
        kryo.addDefaultSerializer(Object[].class, BoundedObjectArraySerializer.class);
    }

    static void check(Input input, long elements, int minBytesPerElement, String what) {
        long remaining = input.limit() - input.position();
        if (elements < 0 || elements * minBytesPerElement > remaining) {
            throw new KryoException(what + " of " + elements + " elements cannot fit in the " + remaining
                    + " bytes that remain in the record");
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    public static final class BoundedCollectionSerializer<T extends Collection> extends CollectionSerializer<T> {
        @Override
        protected T create(Kryo kryo, Input input, Class<? extends T> type, int size) {
            check(input, size, 1, "collection");
            return super.create(kryo, input, type, size);
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    public static final class BoundedMapSerializer<T extends Map> extends MapSerializer<T> {
        @Override
        protected T create(Kryo kryo, Input input, Class<? extends T> type, int size) {
            check(input, size, 2, "map");
            return super.create(kryo, input, type, size);
        }
    }

    public static final class BoundedObjectArraySerializer extends DefaultArraySerializers.ObjectArraySerializer {
        public BoundedObjectArraySerializer(Kryo kryo, Class<?> type) {
            super(kryo, type);
        }

        @Override
        @SuppressWarnings("rawtypes") // Kryo declares the raw type
        public Object[] read(Kryo kryo, Input input, Class type) {
            int mark = input.position();
            int lengthPlusOne = input.readVarInt(true); // 0 is null, n + 1 is an array of n
            input.setPosition(mark);
            check(input, Math.max(0, lengthPlusOne - 1), 1, "array");
            return super.read(kryo, input, type);
        }
    }
}
