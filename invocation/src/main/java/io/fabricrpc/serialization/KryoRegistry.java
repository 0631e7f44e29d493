package io.fabricrpc.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import io.fabricrpc.api.SerializationRegistry;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Kryo side of a {@link SerializationRegistry}: Kryo instances built from its registrations, and the
 * receiver-side invokers of function definitions, linked once per registry and definition and shared by all links.
 */
final class KryoRegistry {
    private static final Map<SerializationRegistry, ConcurrentHashMap<FunctionDefinition, ReceiverFunction>> LINKED =
            Collections.synchronizedMap(new WeakHashMap<>());
    /**
     * Definitions cached per registry. A program has a few hundred lambdas at most, but a peer can vary fields that
     * linking does not check (the instantiated type): past this many, definitions are linked each time, not kept.
     */
    static final int MAX_LINKED = 4096;

    private KryoRegistry() {
    }

    /** A fresh Kryo instance with the registry's registrations; Kryo instances are not thread-safe. */
    static FabricKryo newKryo(SerializationRegistry registry) {
        FabricKryo kryo = new FabricKryo();
        kryo.setRegistrationRequired(true);
        kryo.setReferences(false);
        kryo.setMaxDepth(registry.maxObjectDepth()); // bounds recursion: cyclic or hostile graphs fail, not overflow
        BoundedSerializers.install(kryo);
        for (SerializationRegistry.Registration registration : registry.registrations()) {
            if (registration.serializer() == null) {
                kryo.register(registration.type());
            } else {
                Object serializer = registration.serializer().get();
                if (!(serializer instanceof Serializer<?> kryoSerializer)) {
                    throw new IllegalArgumentException("the serializer factory registered for "
                            + registration.type().getName() + " supplied "
                            + (serializer == null ? "null" : "a " + serializer.getClass().getName())
                            + ", not a Kryo 5 com.esotericsoftware.kryo.Serializer");
                }
                kryo.register(registration.type(), kryoSerializer);
            }
        }
        return kryo;
    }

    /** Loads an allowed capturing class without initializing it. */
    static Class<?> capturingClass(SerializationRegistry registry, String binaryName) throws ClassNotFoundException {
        Class<?> registered = registry.allowedCapturingClass(binaryName);
        if (registered == null && SerializationRegistry.FABRIC_CAPTURING_CLASS.equals(binaryName)) {
            return Class.forName(binaryName, false, KryoRegistry.class.getClassLoader());
        }
        return registered != null ? registered : Class.forName(binaryName, false, registry.classLoader());
    }

    /** The receiver-side invoker of a definition, built once per registry and distinct definition (up to a cap). */
    static ReceiverFunction link(SerializationRegistry registry, FunctionDefinition definition)
            throws FunctionLinker.Refused {
        ConcurrentHashMap<FunctionDefinition, ReceiverFunction> linked =
                LINKED.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
        ReceiverFunction function = linked.get(definition);
        if (function == null) {
            function = FunctionLinker.link(registry, definition);
            if (linked.size() < MAX_LINKED) { // may pass the cap by the number of racing linkers: still bounded
                ReceiverFunction raced = linked.putIfAbsent(definition, function);
                function = raced != null ? raced : function;
            }
        }
        return function;
    }

    /** Test hook: how many definitions are cached for {@code registry}. */
    static int linkedCount(SerializationRegistry registry) {
        var linked = LINKED.get(registry);
        return linked == null ? 0 : linked.size();
    }

    /** Kryo that remembers which class it refused, so the codec can name it in an {@link UnregisteredClassException}. */
    static final class FabricKryo extends Kryo {
        private Class<?> lastUnregistered;

        @Override
        @SuppressWarnings("rawtypes") // Kryo declares the raw type
        protected String unregisteredClassMessage(Class type) {
            lastUnregistered = type;
            return super.unregisteredClassMessage(type);
        }

        /** Returns and clears the class most recently refused as unregistered, or {@code null}. */
        Class<?> takeUnregistered() {
            Class<?> type = lastUnregistered;
            lastUnregistered = null;
            return type;
        }
    }
}
