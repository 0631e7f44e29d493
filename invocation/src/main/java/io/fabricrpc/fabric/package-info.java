/**
 * The job: who is in it and who is still alive.
 *
 * <p>A job is P processes (ranks) with T long-lived worker threads each; a destination is a {@link
 * io.fabricrpc.api.ThreadId} (rank, thread index). {@link io.fabricrpc.api.JobConfig} says which rank this
 * process is (explicitly, or from Slurm / Open MPI environments); {@link io.fabricrpc.fabric.ControlPlane}
 * authenticates the process into the job over Netty, exchanges the transports' descriptors into a
 * {@link io.fabricrpc.fabric.Membership}, and then watches liveness so every fabric wait can end with a
 * {@link io.fabricrpc.api.PeerFailedException}; {@link io.fabricrpc.fabric.LocalLauncher} starts a job of JVMs
 * on one machine.
 */
package io.fabricrpc.fabric;
