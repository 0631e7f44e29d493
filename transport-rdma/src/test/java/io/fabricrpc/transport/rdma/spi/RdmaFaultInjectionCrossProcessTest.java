package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.api.JobConfig;
import io.fabricrpc.invocation.FaultInjectionCrossProcessTest;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The fault-injection suite over RDMA verbs (SIGSTOP and resume, SIGKILL of the coordinator, of an interior broadcast
 * rank, of a sender mid-stream). Each scenario keeps its own failure timeout: the fixture's wide one for cold guest
 * JVMs is dropped here, since a system property would override the variable the suite sets for its children.
 */
@Tag("multi-jvm") // minutes in the guest: not in scripts/rdma-tests.sh's default selection
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
@Timeout(value = 600, unit = TimeUnit.SECONDS) // three JVMs starting under TCG take far longer than the shared 120 s
class RdmaFaultInjectionCrossProcessTest extends FaultInjectionCrossProcessTest {
    private static final String FAILURE_TIMEOUT_OPTION = "-D" + JobConfig.propertyName(JobConfig.ENV_FAILURE_TIMEOUT_MS)
            + "=";

    /** RdmaFixture with its child options less the failure timeout; holding it initializes RdmaFixture first. */
    private static final TransportFixture FIXTURE = new TransportFixture() {
        private final RdmaFixture rdma = RdmaFixture.INSTANCE;

        @Override
        public Map<String, String> config() {
            return rdma.config();
        }

        @Override
        public List<String> childJvmOptions() {
            return rdma.childJvmOptions().stream().filter(o -> !o.startsWith(FAILURE_TIMEOUT_OPTION)).toList();
        }

        @Override
        public boolean isProcessWideThread(String threadName) {
            return rdma.isProcessWideThread(threadName);
        }

        @Override
        public Transport open() {
            return rdma.open();
        }
    };

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }

    @Override
    protected Duration startTimeout() {
        return Duration.ofSeconds(240); // as RdmaFabricCrossProcessTest's children: JVMs start in tens of seconds
    }

    @Override
    protected Duration stepTimeout() {
        return Duration.ofSeconds(90);
    }
}
