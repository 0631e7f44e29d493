package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.FabricProvider;

/** Registers {@link FabricRuntime} as the runtime behind {@link Fabric}'s static methods (ServiceLoader). */
public final class RuntimeProvider implements FabricProvider {

    /** For {@link java.util.ServiceLoader}. */
    public RuntimeProvider() {
    }

    @Override
    public Fabric join(FabricConfig config) {
        return FabricRuntime.join(config);
    }

    @Override
    public Fabric current() {
        return FabricRuntime.current();
    }

    @Override
    public Object currentContext() {
        return FabricRuntime.currentContext();
    }
}
