package io.fabricrpc.mailbox;

import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The server half of the cross-process tests, run in a child JVM: opens the configured transport (system
 * properties {@code fabric.transport}, {@code shm.*}, {@code rdma.*}), prints {@code ADDRESS <kind> <hex>},
 * accepts one mailbox client and answers with {@link MailboxStressTest#answer}. A request from caller
 * {@link #HANG} makes it stop answering (a call in flight when the test kills it); {@link #STOP} ends it.
 */
public final class MailboxServerProcess {
    static final long HANG = -1;
    static final long STOP = -2;

    public static void main(String[] args) throws Exception {
        Map<String, String> config = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            String key = k.toString();
            if (key.startsWith("fabric.") || key.startsWith("shm.") || key.startsWith("rdma.")) {
                config.put(key, v.toString());
            }
        });
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        try (Transport transport = Transports.open(config)) {
            System.out.println("ADDRESS " + transport.address().kind() + " "
                    + HexFormat.of().formatHex(transport.address().bytes()));
            System.out.flush();
            MailboxServer server = MailboxChannels.accept(transport, MailboxConfig.defaults(), Duration.ofSeconds(60));
            boolean[] stop = {false};
            Port.RequestHandler handler = (request, length, reply) -> {
                long caller = request.get(ValueLayout.JAVA_LONG, 0);
                long sequence = request.get(ValueLayout.JAVA_LONG, 8);
                if (caller == HANG) {
                    System.out.println("HANGING");
                    System.out.flush();
                    sleepForever();
                }
                if (caller == STOP) {
                    stop[0] = true;
                }
                reply.set(ValueLayout.JAVA_LONG, 0, sequence);
                reply.set(ValueLayout.JAVA_LONG, 8, MailboxStressTest.answer(caller, sequence));
                return 16;
            };
            Thread[] workers = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                workers[i] = Thread.ofPlatform().start(() -> {
                    while (!stop[0]) {
                        if (!server.serveOne(handler)) {
                            server.link().checkAlive();
                            Thread.onSpinWait();
                        }
                    }
                });
            }
            for (Thread worker : workers) {
                worker.join();
            }
            server.close();
        }
    }

    private static void sleepForever() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
