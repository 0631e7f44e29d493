package io.fabricrpc.transport.rdma.nativelib;

/** Child JVM of {@link NativeVersionTest}: loads whatever -Dfabricrpc.disni.library names and prints the outcome. */
public final class NativeVersionProbe {
    private NativeVersionProbe() {
    }

    public static void main(String[] args) {
        try {
            System.out.println("LOADED " + DisniNativeLibrary.load() + " version " + DisniNativeLibrary.loadedNativeVersion());
        } catch (NativeLibraryException e) {
            System.out.println("REFUSED " + e.getMessage());
        }
    }
}
