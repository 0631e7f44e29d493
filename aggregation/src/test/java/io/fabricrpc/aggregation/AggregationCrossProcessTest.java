package io.fabricrpc.aggregation;

import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Aggregated calls between separate JVMs; every transport module runs it with its own fixture. */
public abstract class AggregationCrossProcessTest {
    protected abstract TransportFixture fixture();

    @ParameterizedTest
    @ValueSource(strings = {"trad", "ovfl"})
    void aggregatedCallsBetweenTwoProcessesAreExactlyOnceAndInOrder(String mode) {
        long perPair = Long.getLong("fabricrpc.aggregation.crossprocess.perPair", 100_000L);
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx256m");
        fixture().config().forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        jvm.addAll(fixture().childJvmOptions());
        try (LocalLauncher job = LocalLauncher.builder(AggregationScenarioMain.class).processes(2).threadsPerProcess(2)
                .jvmArgs(jvm.toArray(String[]::new)).args(mode, Long.toString(perPair)).start()) {
            for (int rank = 0; rank < 2; rank++) {
                String line = job.process(rank).awaitLine(l -> l.startsWith("AGG_"), Duration.ofSeconds(240));
                assertEquals("AGG_OK rank=" + rank + " received=" + perPair * 4 * 2, line);
            }
            job.awaitAll(Duration.ofSeconds(60));
        }
    }
}
