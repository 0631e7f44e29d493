package io.fabricrpc.api;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What both ends of a link agree may cross it: the classes of captured objects and results (Kryo registrations, in a
 * fixed order so that their ids match) and the classes whose lambdas and method references may be invoked.
 *
 * <p>Both ends must build it identically; {@link #fingerprint()} lets a handshake check that they did. Registration
 * is required: an object of an unregistered class is refused at the sender ({@code UnregisteredClassException}) and
 * an unknown class id is refused at the receiver; no class name is ever written for an object. A function
 * definition is refused at the receiver ({@code FunctionNotAllowedException}) unless its capturing class is allowed,
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

    private SerializationRegistry(Builder builder) {
        this.registrations = List.copyOf(builder.registrations);
        this.allowedClasses = Map.copyOf(builder.allowedClasses);
        this.allowedPackages = Set.copyOf(builder.allowedPackages);
        this.classLoader = builder.classLoader;
        this.maxObjectDepth = builder.maxObjectDepth;
        this.fingerprint = computeFingerprint(builder);
    }

    /**
     * {@return a builder of an empty registry: Kryo's built-in registrations (primitives, their boxes, String) only}
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@return a 64-bit hash of the ordered registrations and the allowed capturing classes and packages} Equal on
     * both ends of a link when they were built identically; compare it during the handshake.
     */
    public long fingerprint() {
        return fingerprint;
    }

    /**
     * The fabric's own remote functions (barriers, reductions): allowed in every registry, so that the runtime's
     * collectives work whatever the application allows. Its lambdas capture primitives only.
     */
    public static final String FABRIC_CAPTURING_CLASS = "io.fabricrpc.invocation.Collectives";

    /**
     * Whether lambdas and method references written in the class of this binary name may be invoked.
     *
     * @param binaryName binary name of the capturing class, e.g. {@code com.acme.app.Main}
     * @return true if the class or its package is allowed, or it is {@link #FABRIC_CAPTURING_CLASS}
     */
    public boolean isCapturingClassAllowed(String binaryName) {
        if (allowedClasses.containsKey(binaryName) || FABRIC_CAPTURING_CLASS.equals(binaryName)) {
            return true;
        }
        int dot = binaryName.lastIndexOf('.');
        return allowedPackages.contains(dot < 0 ? "" : binaryName.substring(0, dot));
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

    /**
     * One registration, in order: a class and, optionally, a factory of its Kryo 5 serializer (a
     * {@code Supplier<com.esotericsoftware.kryo.Serializer<T>>}, typed loosely so that this package needs no Kryo).
     *
     * @param type the registered class
     * @param serializer factory of its Kryo serializer, or null for Kryo's default serializer
     */
    public record Registration(Class<?> type, Supplier<?> serializer) {
    }

    /** {@return the registrations in order (Kryo ids follow it)} */
    public List<Registration> registrations() {
        return registrations;
    }

    /**
     * The registered capturing class of this binary name, or null (then {@link #classLoader()} finds it).
     *
     * @param binaryName binary name of the capturing class
     * @return the class given to {@link Builder#allowCapturingClass}, or null
     */
    public Class<?> allowedCapturingClass(String binaryName) {
        return allowedClasses.get(binaryName);
    }

    /** {@return the loader of capturing classes allowed by package} */
    public ClassLoader classLoader() {
        return classLoader;
    }

    /** {@return the deepest object graph a record may hold} */
    public int maxObjectDepth() {
        return maxObjectDepth;
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
         *
         * @param type the class to register
         * @return this builder
         */
        public Builder register(Class<?> type) {
            registrations.add(new Registration(Objects.requireNonNull(type, "type"), null));
            return this;
        }

        /**
         * Registers a class with its own serializer: {@code serializerFactory} supplies a Kryo 5
         * {@code Serializer<T>}, once per Kryo instance (checked when the first codec is built).
         *
         * @param <T> the registered class's type
         * @param type the class to register
         * @param serializerFactory supplies a new {@code com.esotericsoftware.kryo.Serializer<T>} on each call
         * @return this builder
         */
        public <T> Builder register(Class<T> type, Supplier<?> serializerFactory) {
            registrations.add(new Registration(Objects.requireNonNull(type, "type"),
                    Objects.requireNonNull(serializerFactory, "serializerFactory")));
            return this;
        }

        /**
         * Allows the lambdas and method references written in this class to be invoked remotely.
         *
         * @param capturingClass the class whose lambdas and method references may be invoked
         * @return this builder
         */
        public Builder allowCapturingClass(Class<?> capturingClass) {
            allowedClasses.put(capturingClass.getName(), capturingClass);
            return this;
        }

        /**
         * Allows the lambdas of every class of this exact package (not its subpackages), e.g. {@code "com.acme.app"}.
         *
         * @param packageName the package's name; {@code ""} is the unnamed package
         * @return this builder
         */
        public Builder allowCapturingPackage(String packageName) {
            allowedPackages.add(Objects.requireNonNull(packageName, "packageName"));
            return this;
        }

        /**
         * Class loader for capturing classes allowed by package; defaults to this library's loader.
         *
         * @param loader the loader, not null
         * @return this builder
         */
        public Builder classLoader(ClassLoader loader) {
            this.classLoader = Objects.requireNonNull(loader, "loader");
            return this;
        }

        /**
         * Deepest object graph accepted in a captured value or result (default 64). Shared references are not
         * tracked, so a cyclic graph fails with a {@link io.fabricrpc.serialization.SerializationException} when it
         * reaches this depth.
         *
         * @param depth the deepest accepted nesting, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code depth} is less than 1
         */
        public Builder maxObjectDepth(int depth) {
            if (depth < 1) {
                throw new IllegalArgumentException("maxObjectDepth must be positive: " + depth);
            }
            this.maxObjectDepth = depth;
            return this;
        }

        /** {@return an immutable registry of the registrations and allows made so far} */
        public SerializationRegistry build() {
            return new SerializationRegistry(this);
        }
    }
}
