package io.fabricrpc.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What both ends of a link agree may cross it: the classes of captured objects and results (Kryo registrations, in a
 * fixed order so that their ids match) and the classes whose lambdas and method references may be invoked.
 *
 * <p>Both ends must build it identically; {@link #fingerprint()} lets a handshake check that they did. Registration
 * is required: an object of an unregistered class is refused at the sender ({@link UnregisteredClassException}) and
 * an unknown class id is refused at the receiver; no class name is ever written for an object. A function
 * definition is refused at the receiver ({@link FunctionNotAllowedException}) unless its capturing class is allowed,
 * and it must then match a serializable lambda actually compiled into that class (checked through the class's
 * {@code $deserializeLambda$}), so a peer cannot name an arbitrary method.
 *
 * <p>Objects are written as trees: shared references are not tracked (a shared object arrives as copies), graphs
 * deeper than {@link Builder#maxObjectDepth} are refused, and sizes read from a record (strings, arrays, collections,
 * maps) are checked against the record's remaining bytes before anything is allocated.
 *
 * <p>Access: the codec reads the fields of lambda classes and calls implementation methods through
 * {@link java.lang.invoke.MethodHandles#privateLookupIn}. Capturing classes on the class path (unnamed module) need
 * nothing; a capturing class in a named module must open its package to this module ({@code opens p to
 * io.fabricrpc.invocation}, or {@code --add-opens m/p=ALL-UNNAMED} when fabricrpc runs on the class path).
 *
 * <p>Immutable and thread-safe; share one instance among all encoders and decoders of a process.
 */
public final class SerializationRegistry {
    private final List<Registration> registrations;
    private final Map<String, Class<?>> allowedClasses;
    private final Set<String> allowedPackages;
    private final ClassLoader classLoader;
    private final int maxObjectDepth;
    private final long fingerprint;
    private final ConcurrentHashMap<FunctionDefinition, ReceiverFunction> linked = new ConcurrentHashMap<>();

    private SerializationRegistry(Builder builder) {
        this.registrations = List.copyOf(builder.registrations);
        this.allowedClasses = Map.copyOf(builder.allowedClasses);
        this.allowedPackages = Set.copyOf(builder.allowedPackages);
        this.classLoader = builder.classLoader;
        this.maxObjectDepth = builder.maxObjectDepth;
        this.fingerprint = computeFingerprint(builder);
    }

    /** Starts an empty registry: Kryo's built-in registrations (primitives, their boxes, String) only. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A 64-bit hash of the ordered registrations and the allowed capturing classes and packages. Equal on both
     * ends of a link when they were built identically; compare it during the handshake.
     */
    public long fingerprint() {
        return fingerprint;
    }

    /**
     * The fabric's own remote functions (barriers, reductions): allowed in every registry, so that the runtime's
     * collectives work whatever the application allows. Its lambdas capture primitives only.
     */
    static final String FABRIC_CAPTURING_CLASS = "io.fabricrpc.invocation.Collectives";

    /** Whether lambdas and method references written in the class of this binary name may be invoked. */
    public boolean isCapturingClassAllowed(String binaryName) {
        if (allowedClasses.containsKey(binaryName) || FABRIC_CAPTURING_CLASS.equals(binaryName)) {
            return true;
        }
        int dot = binaryName.lastIndexOf('.');
        return allowedPackages.contains(dot < 0 ? "" : binaryName.substring(0, dot));
    }

    /** A fresh Kryo instance with this registry's registrations; Kryo instances are not thread-safe. */
    FabricKryo newKryo() {
        FabricKryo kryo = new FabricKryo();
        kryo.setRegistrationRequired(true);
        kryo.setReferences(false);
        kryo.setMaxDepth(maxObjectDepth); // bounds recursion: cyclic or hostile graphs fail instead of overflowing
        BoundedSerializers.install(kryo);
        for (Registration registration : registrations) {
            if (registration.serializer == null) {
                kryo.register(registration.type);
            } else {
                kryo.register(registration.type, registration.serializer.get());
            }
        }
        return kryo;
    }

    /** Loads an allowed capturing class without initializing it. */
    Class<?> capturingClass(String binaryName) throws ClassNotFoundException {
        Class<?> registered = allowedClasses.get(binaryName);
        if (registered == null && FABRIC_CAPTURING_CLASS.equals(binaryName)) {
            return Class.forName(binaryName, false, SerializationRegistry.class.getClassLoader());
        }
        return registered != null ? registered : Class.forName(binaryName, false, classLoader);
    }

    /** The receiver-side invoker of a definition, built once per distinct definition and shared by all links. */
    ReceiverFunction link(FunctionDefinition definition) throws FunctionLinker.Refused {
        ReceiverFunction function = linked.get(definition);
        if (function == null) {
            function = FunctionLinker.link(this, definition);
            ReceiverFunction raced = linked.putIfAbsent(definition, function);
            function = raced != null ? raced : function;
        }
        return function;
    }

    private static long computeFingerprint(Builder builder) {
        // FNV-1a over a canonical text of the configuration: order of registrations matters, order of allows not.
        StringBuilder text = new StringBuilder();
        for (Registration registration : builder.registrations) {
            text.append("R:").append(registration.type.getName()).append(registration.serializer == null ? "" : "+s")
                    .append('\n');
        }
        builder.allowedClasses.keySet().stream().sorted().forEach(name -> text.append("C:").append(name).append('\n'));
        builder.allowedPackages.stream().sorted().forEach(name -> text.append("P:").append(name).append('\n'));
        text.append("D:").append(builder.maxObjectDepth);
        long hash = 0xcbf29ce484222325L;
        for (byte b : text.toString().getBytes(StandardCharsets.UTF_8)) {
            hash = (hash ^ (b & 0xFF)) * 0x100000001b3L;
        }
        return hash;
    }

    private record Registration(Class<?> type, Supplier<? extends Serializer<?>> serializer) {
    }

    /** Collects registrations; not thread-safe. The order of {@code register} calls defines the class ids. */
    public static final class Builder {
        private final List<Registration> registrations = new ArrayList<>();
        private final Map<String, Class<?>> allowedClasses = new LinkedHashMap<>();
        private final Set<String> allowedPackages = new LinkedHashSet<>();
        private ClassLoader classLoader = SerializationRegistry.class.getClassLoader();
        private int maxObjectDepth = 64;

        private Builder() {
        }

        /**
         * Registers a class that captured values or results may have, serialized by Kryo's default serializer for
         * it (field serializer for POJOs, record serializer for records). Arrays must be registered too, e.g.
         * {@code int[].class}.
         */
        public Builder register(Class<?> type) {
            registrations.add(new Registration(Objects.requireNonNull(type, "type"), null));
            return this;
        }

        /** Registers a class with its own serializer; the factory is called once per Kryo instance. */
        public <T> Builder register(Class<T> type, Supplier<? extends Serializer<T>> serializerFactory) {
            registrations.add(new Registration(Objects.requireNonNull(type, "type"),
                    Objects.requireNonNull(serializerFactory, "serializerFactory")));
            return this;
        }

        /** Allows the lambdas and method references written in this class to be invoked remotely. */
        public Builder allowCapturingClass(Class<?> capturingClass) {
            allowedClasses.put(capturingClass.getName(), capturingClass);
            return this;
        }

        /** Allows the lambdas of every class of this exact package (not its subpackages), e.g. {@code "com.acme.app"}. */
        public Builder allowCapturingPackage(String packageName) {
            allowedPackages.add(Objects.requireNonNull(packageName, "packageName"));
            return this;
        }

        /** Class loader for capturing classes allowed by package; defaults to this library's loader. */
        public Builder classLoader(ClassLoader loader) {
            this.classLoader = Objects.requireNonNull(loader, "loader");
            return this;
        }

        /**
         * Deepest object graph accepted in a captured value or result (default 64). Shared references are not
         * tracked, so a cyclic graph fails with a {@link SerializationException} when it reaches this depth.
         */
        public Builder maxObjectDepth(int depth) {
            if (depth < 1) {
                throw new IllegalArgumentException("maxObjectDepth must be positive: " + depth);
            }
            this.maxObjectDepth = depth;
            return this;
        }

        public SerializationRegistry build() {
            return new SerializationRegistry(this);
        }
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
