package io.fabricrpc.benchmarks;

import io.fabricrpc.transport.EndpointAddress;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running {@link BenchServerProcess}, controlled over its stdin/stdout line protocol. Every answer is
 * awaited for at most {@link #ANSWER_TIMEOUT_SECONDS}; an {@code ERROR} line or a dead child is an
 * {@link IllegalStateException} carrying what the child said. Used by one thread.
 */
final class ChildEcho implements EchoControl {
    static final long ANSWER_TIMEOUT_SECONDS = 60;

    private final Process process;
    private final Writer commands;
    private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(1000);

    private ChildEcho(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // The module flags of this JVM (Agrona needs them) and nothing else: no debug agents in the child.
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native-access")
                        || a.startsWith("--sun-misc"))
                .forEach(command::add);
        command.add("-Xmx256m");
        // The parent's transport (shm unless it says otherwise, e.g. -Dfabric.transport=rdma -Drdma.bindAddress=...).
        command.add("-Dfabric.transport=" + System.getProperty("fabric.transport", "shm"));
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("rdma."))
                .forEach(k -> command.add("-D" + k + "=" + System.getProperty(k)));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(BenchServerProcess.class.getName());
        command.addAll(args);
        try {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the echo JVM " + command + ": " + e, e);
        }
        commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofPlatform().daemon().name("echo-child-" + process.pid() + "-stdout").start(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = reader.readLine()) != null; ) {
                    lines.offer(line);
                }
            } catch (IOException ignored) {
                // the child ended; expect() reports it
            }
        });
    }

    /** Starts a mailbox echo child; returns once it printed its address (it then awaits the client's HELLO). */
    static ChildEcho mailbox(int ports, int packetSize, Idle idle, int cpu) {
        return new ChildEcho(List.of("mailbox", Integer.toString(ports), Integer.toString(packetSize), idle.name(),
                Integer.toString(cpu)));
    }

    /** Starts an Agrona echo child on an existing ring file and waits until it has mapped it. */
    static ChildEcho agrona(Path ringFile, int capacity, Idle idle, int cpu) {
        ChildEcho child = new ChildEcho(List.of("agrona", ringFile.toString(), Integer.toString(capacity), idle.name(),
                Integer.toString(cpu)));
        try {
            child.expect("READY");
        } catch (RuntimeException e) {
            child.close();
            throw e;
        }
        return child;
    }

    /** Starts a child that joins the job at {@code port} as rank 1; it says READY once the job has formed. */
    static ChildEcho fabric(int port, String secret, Idle idle, int cpu) {
        return new ChildEcho(List.of("fabric", Integer.toString(port), secret, idle.name(), Integer.toString(cpu)));
    }

    EndpointAddress address() {
        String[] parts = expect("ADDRESS ").split(" ");
        return new EndpointAddress(parts[1], HexFormat.of().parseHex(parts[2]));
    }

    String expect(String prefix) {
        String line;
        try {
            line = lines.poll(ANSWER_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while awaiting " + prefix + " from echo child " + process.pid());
        }
        if (line == null) {
            throw new IllegalStateException("echo child " + process.pid() + " said nothing within " + ANSWER_TIMEOUT_SECONDS
                    + " s while " + prefix + " was expected (" + (process.isAlive() ? "still running" : "exited with "
                    + process.exitValue()) + "; its stderr is this process's stderr)");
        }
        if (!line.startsWith(prefix)) {
            throw new IllegalStateException("echo child " + process.pid() + " answered '" + line + "', expected " + prefix);
        }
        return line;
    }

    private String ask(String command, String answerPrefix) {
        try {
            commands.write(command + "\n");
            commands.flush();
        } catch (IOException e) {
            throw new IllegalStateException("cannot send " + command + " to echo child " + process.pid() + " ("
                    + (process.isAlive() ? "running" : "exited") + "): " + e, e);
        }
        return expect(answerPrefix);
    }

    @Override
    public void activate() {
        ask("RUN", "OK");
    }

    @Override
    public void pause() {
        ask("PAUSE", "OK");
    }

    @Override
    public long allocatedBytes() {
        return Long.parseLong(ask("ALLOC", "ALLOC ").substring("ALLOC ".length()).trim());
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        try {
            commands.write("STOP\n");
            commands.close();
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
