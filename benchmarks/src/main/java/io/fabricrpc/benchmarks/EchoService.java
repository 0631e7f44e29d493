package io.fabricrpc.benchmarks;

/** The echoing side of a ping-pong, polled by one thread: copies each request's payload back as the reply. */
interface EchoService {
    /** Serves at most one pending request; returns 1 if it served one, 0 if none was pending. */
    int poll();
}
