package io.fabricrpc.aggregation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.invocation.FabricTest.Inbox;
import io.fabricrpc.invocation.LocalJob;
import io.fabricrpc.api.MessengerConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank of the cross-process aggregation test ({@code trad|ovfl N}): every worker sends N calls to every
 * worker through an aggregating view, shuts its aggregators down, waits for everyone's shutdown signals, checks
 * order and count, and prints {@code AGG_OK rank=R received=C}.
 */
public final class AggregationScenarioMain {
    private AggregationScenarioMain() {
    }

    public static void main(String[] args) throws Exception {
        boolean traditional = args[0].equals("trad");
        long perPair = Long.parseLong(args[1]);
        // Small rings for OVERFLOW, so that exceeding calls happen across processes too.
        MessengerConfig messenger = traditional ? MessengerConfig.defaults() : MessengerConfig.defaults().withChunks(4096, 1, 2);
        Fabric fabric = Fabric.join(FabricConfig.of(JobConfig.fromEnvironment(), LocalJob.registry()).withMessenger(messenger));
        Fabric calls = traditional ? Aggregation.traditional(fabric, AggregationConfig.traditional())
                : Aggregation.overflow(fabric, AggregationConfig.overflow());
        int threads = fabric.threadsPerProcess();
        int workers = fabric.size() * threads;
        List<Inbox> inboxes = new ArrayList<>();
        List<Thread> running = new ArrayList<>();
        for (int index = 0; index < threads; index++) {
            Inbox inbox = new Inbox(workers);
            inboxes.add(inbox);
            int worker = index;
            running.add(Thread.ofPlatform().start(() -> {
                fabric.attach(worker, inbox);
                int me = fabric.rank() * threads + worker;
                for (long sequence = 0; sequence < perPair; sequence++) {
                    for (int dest = 0; dest < workers; dest++) {
                        long s = sequence;
                        calls.call(new ThreadId(dest / threads, dest % threads),
                                (RemoteContextConsumer<Inbox>) box -> box.record(me, s), null);
                    }
                    if ((sequence & 255) == 0) {
                        fabric.processCalls();
                    }
                }
                Aggregation.shutdown(calls);
                Aggregation.awaitShutdownSignals(fabric, workers, Duration.ofMinutes(3));
            }));
        }
        for (Thread thread : running) {
            thread.join();
        }
        long received = 0;
        for (Inbox inbox : inboxes) {
            if (inbox.error != null) {
                System.out.println("AGG_FAILED rank=" + fabric.rank() + " " + inbox.error);
                System.exit(1);
            }
            received += inbox.received;
        }
        System.out.println("AGG_OK rank=" + fabric.rank() + " received=" + received);
        fabric.close();
        System.exit(0);
    }
}
