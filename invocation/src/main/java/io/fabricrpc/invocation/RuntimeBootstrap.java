package io.fabricrpc.invocation;

import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.counters.CountersPublisher;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.fabric.ControlPlaneListener;
import io.fabricrpc.fabric.Membership;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.messaging.MessagingNode;
import io.fabricrpc.messaging.ReceivingThread;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.function.Function;

/**
 * Brings one process into the job: opens the transport, the messaging node and the counters, creates every part a
 * peer may reach as soon as the job forms (their handlers registered before the join), joins the control plane,
 * checks each rank's registry fingerprint and endpoint, and hands the control plane's failure verdicts to the data
 * plane. Runs once, on the joining thread; on a failure it closes what it opened and rethrows.
 */
final class RuntimeBootstrap {
    private static final String REGISTRY_DESCRIPTOR = "registry";

    /** What the bootstrap wired, for the runtime to hold. */
    record Parts(Transport transport, MessagingNode node, CountersPublisher counters, ControlPlane control,
                 PeerLinks links, MemoryRegions memory, SendCalls sendCalls, ReturnCalls returns,
                 MailboxChannelSet mailboxes, ReceivingThread[] receiving, Routes.Network network,
                 ThreadContexts contexts, Broadcasts broadcasts, Workers workers) {
        /** At the runtime's close, once it is closed: every part, in an order that leaves no wait behind. */
        void close() {
            workers.joinHandlers();
            returns.pending().failAll(control.rank());
            control.close();
            node.close(); // stops the agent, so the counters publisher too
            if (counters != null) {
                counters.close();
            }
            mailboxes.close();
            contexts.closeAll();
            sendCalls.close();
            memory.close();
            transport.close();
        }
    }

    private RuntimeBootstrap() {
    }

    /** Joins the job: checks the setup, builds the runtime with {@code build} (which calls {@link #start}). */
    static FabricRuntime join(FabricConfig config, Function<FabricConfig, FabricRuntime> build) {
        io.fabricrpc.doctor.JoinChecks.verify(config); // fails early, naming the fix, before anything is set up
        // Installed while the join waits for its peers, in effect before the first call is compiled.
        var directives = JitDirectives.installOnce(config.transport());
        FabricRuntime runtime = build.apply(config);
        JitDirectives.await(directives);
        return runtime;
    }

    /** Test hook: runs once the job is formed, while peers already reach this process but its runtime is not built. */
    static volatile IntConsumer afterJoinForTest = rank -> { };

    static Parts start(FabricConfig config, FabricRuntime runtime) {
        SerializationRegistry registry = config.registry();
        int rank = config.job().rank();
        int size = config.job().size();
        int threads = config.job().threadsPerProcess();
        Transport transport = Transports.open(config.transport());
        MessagingNode node = null;
        ControlPlane plane = null;
        CountersPublisher counters = null;
        try {
            node = new MessagingNode(transport);
            // Before anything is created, so every messenger, inbox and link registers its counters.
            counters = CountersPublisher.open(config.transport(), rank,
                    config.job().coordinatorHost() + ":" + config.job().coordinatorPort());
            if (counters != null) {
                node.counters(counters);
                node.agent().add(counters::publishIfDue);
            }
            // Every handler before joining: once the job is formed, peers may make send-based calls, ask for
            // memory, open mailbox channels to our workers and send to them at once.
            SendCalls sendCalls = new SendCalls(runtime, node, registry, transport, config.callTimeout(), threads);
            MemoryRegions memory = new MemoryRegions(runtime, transport, node.service(), config.transport(),
                    config.callTimeout(), rank, size);
            ReturnCalls returns = new ReturnCalls(runtime, registry, config.callTimeout(), node.agent());
            node.agent().add(returns.pending()); // sweeps the deadlines of calls nobody polls for
            MailboxChannelSet mailboxes = new MailboxChannelSet(runtime, transport, node.service(), rank, size, threads,
                    config.returnSlotBytes(), config.callTimeout(), config.transport());
            ReceivingThread[] receiving = new ReceivingThread[threads];
            for (int i = 0; i < threads; i++) {
                receiving[i] = node.registerReceiver(ThreadId.pack(rank, i));
            }
            byte[] fingerprint = ByteBuffer.allocate(8).putLong(registry.fingerprint()).array();
            plane = ControlPlane.startAndJoin(config.job(), Map.of(transport.kind(), transport.address().bytes(),
                    REGISTRY_DESCRIPTOR, fingerprint));
            afterJoinForTest.accept(rank);
            // Before the listener below, whose replay then covers any OPEN served while this was still unset.
            mailboxes.joined(plane);
            EndpointAddress[] addresses = addresses(plane.membership(), transport, registry, fingerprint, size);
            if (counters != null) {
                counters.register(plane.counters());
            }
            ControlPlane joined = plane;
            // This endpoint's own memory is gone: the process can serve nothing, so it leaves the job as failed.
            transport.onEndpointFault(reason -> {
                joined.failStop(reason);
                runtime.reportError(ThreadId.pack(rank, 0), new TransportException(reason));
            });
            PeerLinks links = new PeerLinks(transport, node, plane, addresses);
            plane.addListener(new ControlPlaneListener() {
                @Override
                public void peerFailed(int failedRank, PeerFailedException failure) {
                    links.fence(failedRank, failure);
                    returns.pending().peerFailed(failedRank, failure);
                    mailboxes.peerFailed(failedRank);
                }
            });
            // The parts no peer reaches directly: built on the joined job.
            Routes.Network network = new Routes.Network(runtime, config, node, counters, plane, links::address);
            ThreadContexts contexts = new ThreadContexts(runtime, network, receiving, rank, runtime::isClosed);
            Broadcasts broadcasts = new Broadcasts(runtime, contexts, transport, memory, registry,
                    config.messenger().chunkSize());
            Workers workers = new Workers(runtime, contexts, sendCalls, returns);
            node.agent().add(new BlockedWorkers(contexts, mailboxes, rank, threads));
            for (ReceivingThread worker : receiving) {
                worker.onError(workers::report); // only attached workers run calls: none could fail before this
            }
            return new Parts(transport, node, counters, plane, links, memory, sendCalls, returns, mailboxes, receiving,
                    network, contexts, broadcasts, workers);
        } catch (RuntimeException e) {
            if (plane != null) {
                plane.close();
            }
            if (node != null) {
                node.close();
            }
            if (counters != null) {
                counters.close();
            }
            transport.close();
            throw e;
        }
    }

    /** Every rank's endpoint, after checking that it built the same registry and uses the same transport. */
    private static EndpointAddress[] addresses(Membership membership, Transport transport,
                                               SerializationRegistry registry, byte[] fingerprint, int size) {
        EndpointAddress[] addresses = new EndpointAddress[size];
        for (int r = 0; r < size; r++) {
            byte[] theirs = membership.descriptor(r, REGISTRY_DESCRIPTOR);
            if (theirs == null || !Arrays.equals(theirs, fingerprint)) {
                throw new IllegalStateException("rank " + r + " built a different serialization registry (fingerprint "
                        + (theirs == null ? "missing" : Long.toHexString(ByteBuffer.wrap(theirs).getLong()))
                        + ", this rank " + Long.toHexString(registry.fingerprint())
                        + "): every process must register the same classes in the same order");
            }
            byte[] address = membership.descriptor(r, transport.kind());
            if (address == null) {
                throw new IllegalStateException("rank " + r + " has no '" + transport.kind() + "' endpoint"
                        + " (fabric.transport must be the same in every process)");
            }
            addresses[r] = new EndpointAddress(transport.kind(), address);
        }
        return addresses;
    }
}
