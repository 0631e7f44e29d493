import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.api.ThreadId;

public final class Hello {
    public static void main(String[] args) {
        SerializationRegistry registry = SerializationRegistry.builder().allowCapturingClass(Hello.class).build();
        try (Fabric fabric = Fabric.join(FabricConfig.fromEnvironment(registry))) {
            fabric.startHandlerThreads();                  // daemon threads run the calls sent to this process
            int me = fabric.rank(), next = (me + 1) % fabric.size();
            long answer = fabric.callReturn(new ThreadId(next, 0), () -> me * 100L + Fabric.current().rank());
            System.out.println("rank " + me + " asked rank " + next + ": " + answer);
        }
    }
}
