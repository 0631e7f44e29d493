package io.fabricrpc.benchmarks;

import io.fabricrpc.mailbox.MailboxChannels;
import io.fabricrpc.mailbox.MailboxServer;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The echo side of a cross-process placement, run in a child JVM by {@link ChildEcho}. Arguments:
 * {@code mailbox <ports> <packetSize> <idle> <cpu>} (opens the transport configured by the {@code fabric.*} and
 * {@code shm.*} system properties, prints {@code ADDRESS <kind> <hex>}, accepts one mailbox client) or
 * {@code agrona <ringFile> <capacity> <idle> <cpu>} (maps the baseline's ring file) or {@code fabric <port> <secret>
 * <idle> <cpu>} (joins as rank 1 of the client's job and runs worker 0's calls); the echo thread is pinned
 * to {@code cpu} unless it is -1. Then prints {@code READY} and obeys
 * one command per stdin line, answering each on stdout: {@code RUN} and {@code PAUSE} (answer {@code OK}),
 * {@code ALLOC} (answer {@code ALLOC <bytes the echo thread allocated>}), {@code STOP} or end of input (exits 0).
 * Any failure prints {@code ERROR <message>} and exits 1.
 */
public final class BenchServerProcess {
    private BenchServerProcess() {
    }

    public static void main(String[] args) {
        try {
            serve(args);
            System.exit(0);
        } catch (Throwable e) {
            System.out.println("ERROR " + e.toString().replace('\n', ' '));
            System.out.flush();
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void serve(String[] args) throws Exception {
        if (args.length != 5) {
            throw new IllegalArgumentException("usage: mailbox <ports> <packetSize> <idle> <cpu> | agrona <ringFile>"
                    + " <capacity> <idle> <cpu>; got " + String.join(" ", args));
        }
        Idle idle = Idle.valueOf(args[3]);
        int cpu = Integer.parseInt(args[4]);
        switch (args[0]) {
            case "mailbox" -> {
                try (Transport transport = Transports.open(transportConfig())) {
                    System.out.println("ADDRESS " + transport.address().kind() + " "
                            + HexFormat.of().formatHex(transport.address().bytes()));
                    System.out.flush();
                    MailboxServer server = MailboxChannels.accept(transport,
                            MailboxRttBenchmark.mailboxConfig(Integer.parseInt(args[1]), Integer.parseInt(args[2]), idle),
                            Duration.ofSeconds(60));
                    try (EchoLoop loop = new EchoLoop("echo-mailbox", new MailboxPingPong.Echo(server),
                            idle.newStrategy(), cpu)) {
                        obey(loop);
                    } finally {
                        server.close();
                    }
                }
            }
            case "agrona" -> {
                int capacity = Integer.parseInt(args[2]);
                try (SharedRingFile file = SharedRingFile.open(Path.of(args[1]),
                        PingPongRingsDescriptor.regionLength(capacity));
                     EchoLoop loop = new EchoLoop("echo-agrona", new AgronaPingPong.Echo(file.buffer(), capacity),
                             idle.newStrategy(), cpu)) {
                    obey(loop);
                }
            }
            case "fabric" -> {
                // args[1] the coordinator port, args[2] the job secret: rank 1 of the client's two-process job.
                io.fabricrpc.api.Fabric fabric = FabricCallPingPong.join(1, Integer.parseInt(args[1]), args[2]);
                try (EchoLoop loop = new EchoLoop("echo-fabric", new FabricCallPingPong.Echo(fabric),
                        idle.newStrategy(), cpu)) {
                    obey(loop);
                } finally {
                    fabric.close();
                }
            }
            default -> throw new IllegalArgumentException("unknown echo kind '" + args[0] + "' (mailbox, agrona or"
                    + " fabric)");
        }
    }

    private static Map<String, String> transportConfig() {
        Map<String, String> config = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            String key = k.toString();
            if (key.startsWith("fabric.") || key.startsWith("shm.")) {
                config.put(key, v.toString());
            }
        });
        config.putIfAbsent("fabric.transport", "shm");
        return config;
    }

    private static void obey(EchoLoop loop) throws Exception {
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            switch (line.trim()) {
                case "RUN" -> {
                    loop.activate();
                    System.out.println("OK");
                }
                case "PAUSE" -> {
                    loop.pause();
                    System.out.println("OK");
                }
                case "ALLOC" -> System.out.println("ALLOC " + loop.allocatedBytes());
                case "STOP" -> {
                    return;
                }
                default -> throw new IllegalArgumentException("unknown command '" + line + "'");
            }
            System.out.flush();
        }
    }
}
