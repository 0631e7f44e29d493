package io.fabricrpc.serialization;

import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.SerializationRegistry;
import org.junit.jupiter.api.Test;

import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The cache of linked functions: one invoker per definition, bounded whatever definitions a peer sends. */
class KryoRegistryTest {
    static int ran;

    private static SerializedLambda serialized(Object lambda) throws ReflectiveOperationException {
        Method writeReplace = lambda.getClass().getDeclaredMethod("writeReplace");
        writeReplace.setAccessible(true);
        return (SerializedLambda) writeReplace.invoke(lambda);
    }

    @Test
    void aDefinitionIsLinkedOnceAndVariedDefinitionsDoNotGrowTheCachePastItsCap() throws Exception {
        SerializationRegistry registry = SerializationRegistry.builder().allowCapturingClass(KryoRegistryTest.class)
                .build();
        RemoteRunnable function = () -> ran++;
        SerializedLambda lambda = serialized(function);
        FunctionDefinition real = FunctionDefinition.of(lambda, "()V");
        ReceiverFunction first = KryoRegistry.link(registry, real);
        assertSame(first, KryoRegistry.link(registry, real), "linked once, then shared");
        // The instantiated type is not checked by linking: a peer can make every definition distinct.
        for (int i = 0; i < KryoRegistry.MAX_LINKED + 500; i++) {
            FunctionDefinition varied = new FunctionDefinition(real.implMethodKind(), real.capturingClass(),
                    real.functionalInterfaceClass(), real.functionalInterfaceMethodName(),
                    real.functionalInterfaceMethodSignature(), real.implClass(), real.implMethodName(),
                    real.implMethodSignature(), real.instantiatedMethodType() + i, real.captureTypes());
            KryoRegistry.link(registry, varied);
        }
        int cached = KryoRegistry.linkedCount(registry);
        assertTrue(cached <= KryoRegistry.MAX_LINKED, cached + " definitions cached, cap " + KryoRegistry.MAX_LINKED);
        assertEquals(KryoRegistry.MAX_LINKED, cached, "the cache fills up to its cap");
    }
}
