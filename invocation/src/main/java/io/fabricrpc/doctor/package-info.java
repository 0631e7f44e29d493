/**
 * Environment checks for a fabricrpc job: what the JVM, shared memory, memory locking and (through
 * {@link io.fabricrpc.doctor.DoctorCheckProvider} implementations found by {@link java.util.ServiceLoader}) the RDMA
 * stack need on this machine, each result with the observed value and a one-line fix.
 *
 * <p>{@link io.fabricrpc.doctor.Doctor} runs every check (the {@code fabricrpc doctor} command);
 * {@link io.fabricrpc.doctor.JoinChecks} runs the cheap ones before a process joins a job. Checks read the machine
 * only through {@link io.fabricrpc.doctor.Host}, so tests run them against fake {@code /proc} and {@code /sys} trees.
 */
package io.fabricrpc.doctor;
