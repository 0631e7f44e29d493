package io.fabricrpc.fabric;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The job as handed out by the coordinator: its size, threads per process, and for every rank the host, the
 * process id and the opaque transport descriptors that process published (keyed by transport name, e.g.
 * {@code "shm"}, {@code "rdma"}). Every process of a job receives an equal {@code Membership}.
 *
 * <p>Immutable and thread-safe; descriptor bytes are copied in and out.
 */
public final class Membership {

    /** One process of the job. Immutable. */
    public static final class Member {
        private final int rank;
        private final String host;
        private final long pid;
        private final TreeMap<String, byte[]> descriptors;

        public Member(int rank, String host, long pid, Map<String, byte[]> descriptors) {
            if (rank < 0) {
                throw new IllegalArgumentException("rank must be >= 0: " + rank);
            }
            this.rank = rank;
            this.host = Objects.requireNonNull(host, "host");
            this.pid = pid;
            this.descriptors = new TreeMap<>();
            descriptors.forEach((name, bytes) -> this.descriptors.put(Objects.requireNonNull(name, "transport name"),
                Objects.requireNonNull(bytes, "descriptor of " + name).clone()));
        }

        public int rank() {
            return rank;
        }

        /** Host as seen by the coordinator (IP literal unless configured otherwise). */
        public String host() {
            return host;
        }

        public long pid() {
            return pid;
        }

        /** Names of the transports this process published a descriptor for, sorted. */
        public Set<String> transports() {
            return Collections.unmodifiableSet(descriptors.keySet());
        }

        /** A copy of the descriptor published for {@code transport}, or null if none. */
        public byte[] descriptor(String transport) {
            byte[] d = descriptors.get(transport);
            return d == null ? null : d.clone();
        }

        /** A copy of all descriptors. */
        public Map<String, byte[]> descriptors() {
            TreeMap<String, byte[]> copy = new TreeMap<>();
            descriptors.forEach((k, v) -> copy.put(k, v.clone()));
            return copy;
        }

        Map<String, byte[]> descriptorsNoCopy() {
            return descriptors;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Member m) || m.rank != rank || m.pid != pid || !m.host.equals(host)
                || !m.descriptors.keySet().equals(descriptors.keySet())) {
                return false;
            }
            for (var e : descriptors.entrySet()) {
                if (!Arrays.equals(e.getValue(), m.descriptors.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public int hashCode() {
            int h = Objects.hash(rank, host, pid);
            for (var e : descriptors.entrySet()) {
                h = 31 * h + e.getKey().hashCode() * 17 + Arrays.hashCode(e.getValue());
            }
            return h;
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("rank ").append(rank).append(" @").append(host).append(" pid ")
                .append(pid).append(" {");
            descriptors.forEach((k, v) -> sb.append(k).append(':').append(v.length).append("B "));
            return sb.append('}').toString();
        }
    }

    private final int threadsPerProcess;
    private final List<Member> members;

    /**
     * @param members one per rank, in rank order starting at 0
     * @throws IllegalArgumentException if the ranks are not exactly {@code 0..members.size()-1} in order
     */
    public Membership(int threadsPerProcess, List<Member> members) {
        if (threadsPerProcess < 1) {
            throw new IllegalArgumentException("threadsPerProcess must be >= 1: " + threadsPerProcess);
        }
        for (int i = 0; i < members.size(); i++) {
            if (members.get(i).rank() != i) {
                throw new IllegalArgumentException("member at index " + i + " has rank " + members.get(i).rank());
            }
        }
        this.threadsPerProcess = threadsPerProcess;
        this.members = List.copyOf(new ArrayList<>(members));
    }

    /** Number of processes in the job. */
    public int size() {
        return members.size();
    }

    public int threadsPerProcess() {
        return threadsPerProcess;
    }

    /** The member with {@code rank}; throws {@link IndexOutOfBoundsException} naming the rank if out of range. */
    public Member member(int rank) {
        if (rank < 0 || rank >= members.size()) {
            throw new IndexOutOfBoundsException("rank " + rank + " not in job of size " + members.size());
        }
        return members.get(rank);
    }

    /** All members in rank order. */
    public List<Member> members() {
        return members;
    }

    public String host(int rank) {
        return member(rank).host();
    }

    public long pid(int rank) {
        return member(rank).pid();
    }

    /** A copy of {@code rank}'s descriptor for {@code transport}, or null if it published none. */
    public byte[] descriptor(int rank, String transport) {
        return member(rank).descriptor(transport);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Membership m && m.threadsPerProcess == threadsPerProcess && m.members.equals(members);
    }

    @Override
    public int hashCode() {
        return 31 * threadsPerProcess + members.hashCode();
    }

    @Override
    public String toString() {
        return "Membership{size=" + size() + ", threadsPerProcess=" + threadsPerProcess + ", " + members + "}";
    }
}
