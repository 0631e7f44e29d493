package io.fabricrpc.api;

import java.util.ServiceLoader;

/**
 * The runtime behind {@link Fabric}'s static methods, found once through {@link ServiceLoader} so that this package
 * depends on no implementation. fabricrpc's own runtime registers itself in {@code META-INF/services}; an
 * application never implements this.
 */
public interface FabricProvider {

    /**
     * Joins the job described by {@code config} (see {@link Fabric#join}).
     *
     * @param config who this process is, the transport, the serialization registry and the messenger settings
     * @return this process's fabric, joined and connected to every other process of the job
     */
    Fabric join(FabricConfig config);

    /** {@return the fabric of the calling worker or handler thread, or null} See {@link Fabric#current}. */
    Fabric current();

    /** {@return the context object of the calling worker, or null} See {@link Fabric#currentContext}. */
    Object currentContext();

    /** {@return the provider found on the class path} Loaded once, on first use. */
    static FabricProvider instance() {
        return Holder.PROVIDER;
    }

    /** Lazy holder: a constant after its first use, so the JIT sees one implementation. */
    final class Holder {
        static final FabricProvider PROVIDER = load();

        private Holder() {
        }

        private static FabricProvider load() {
            return ServiceLoader.load(FabricProvider.class, FabricProvider.class.getClassLoader()).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no fabricrpc runtime on the class path: "
                            + "add io.fabricrpc:invocation (it registers " + FabricProvider.class.getName()
                            + " in META-INF/services)"));
        }
    }
}
