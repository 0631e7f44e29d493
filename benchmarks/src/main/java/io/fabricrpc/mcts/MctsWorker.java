package io.fabricrpc.mcts;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.ThreadId;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One worker thread's part of the tree: the nodes it owns (by local id), its queue of simulation requests, its
 * counters. Every method runs on the worker's own thread (its calls arrive through {@code processCalls}); the only
 * things other threads touch are the queue (many producers of its process, one consumer) and the shared root.
 * Each handler finishes its node's updates before it makes its one or more calls, so a call that runs this
 * worker's other calls while it waits for room (the messenger's RETRY) finds every node consistent.
 */
public final class MctsWorker {
    private static final int QUEUE_CAPACITY = 1 << 16;

    final MctsSearch search;
    final int index;
    final int global;
    final ManyToOneConcurrentArrayQueue<Node> simulations = new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    private final Game game;
    private final Fabric calls;
    private final SplittableRandom random;
    private final int[] scratch;
    private final int scale;
    private Node[] nodes = new Node[1024];
    private int nodeCount;
    // Counters, read by the coordinator through callReturn on this thread.
    long visits;
    long simulated;
    long deferrals;
    long expansions;

    MctsWorker(MctsSearch search, int index) {
        this.search = search;
        this.index = index;
        this.global = search.fabric.rank() * search.threads + index;
        this.game = search.game;
        this.calls = search.calls;
        this.random = new SplittableRandom(MctsSettings.nodeSeed(search.settings.seed(), global, 3));
        this.scratch = new int[game.maxMoves()];
        this.scale = 2 * search.settings.playouts();
    }

    static long location(int global, int id) {
        return (long) global << 32 | id;
    }

    private ThreadId owner(long location) {
        return search.ids[(int) (location >>> 32)];
    }

    Node node(int id) {
        return nodes[id];
    }

    int nodeCount() {
        return nodeCount;
    }

    Node register(byte[] state, long parent, int parentSlot, boolean shared) {
        if (nodeCount == nodes.length) {
            nodes = Arrays.copyOf(nodes, nodeCount * 2);
        }
        Node node = new Node(game, state, location(global, nodeCount), parent, parentSlot, shared,
                search.settings.seed(), scratch);
        nodes[nodeCount++] = node;
        return node;
    }

    long[] counters() {
        return new long[] {visits, simulated, deferrals, expansions, nodeCount};
    }

    /** Selection at {@code node}: expand an unexplored move, evaluate a terminal node, or descend by UCB. */
    void select(Node node) {
        visits++;
        if (node.terminal()) {
            evaluate(node);
            return;
        }
        int slot = node.claimExpansion(game, search.settings.seed(), scratch);
        if (slot >= 0) {
            expansions++;
            int childOwner = random.nextInt(search.workers); // uniformly at random over the whole job
            sendExpand(search.ids[childOwner], node.state, node.location, slot, node.move(slot));
            return;
        }
        slot = node.selectAndVisit(search.settings.exploration(), scale);
        if (slot < 0) {
            throw new IllegalStateException("no child to select at a node with every move expanded");
        }
        long child = node.child(slot);
        if (child >= 0) {
            sendSelect(child);
        } else {
            deferrals++;
            release(node.defer(slot), node, slot);
        }
    }

    private void release(int deferred, Node node, int slot) {
        if (deferred > 0) {
            long child = node.child(slot);
            for (int i = 0; i < deferred; i++) {
                sendSelect(child);
            }
        }
    }

    /** The child's owner: creates the node from the parent's state and the move, has it simulated, tells the parent. */
    void expand(MemorySegment parentState, long parent, int slot, int move) {
        byte[] state = parentState.toArray(ValueLayout.JAVA_BYTE);
        game.play(state, move);
        Node node = register(state, parent, slot, false);
        evaluate(node);
        sendPlaced(parent, slot, node.location);
    }

    /** A leaf's simulation request goes to a random thread of this process, through its wait-free queue. */
    private void evaluate(Node leaf) {
        MctsWorker target = search.local[random.nextInt(search.threads)];
        if (!target.simulations.offer(leaf)) {
            simulate(leaf); // that queue is full: simulate here rather than lose or block
        }
    }

    /** Runs the playouts of one leaf and starts the backpropagation with player 0's half-points. */
    void simulate(Node leaf) {
        simulated++;
        int playouts = search.settings.playouts();
        long score0 = 0;
        if (leaf.terminal()) {
            score0 = playouts * (long) halfPoints0(leaf.winner);
        } else {
            SplittableRandom r = new SplittableRandom(MctsSettings.nodeSeed(search.settings.seed(), leaf.location, 2));
            for (int i = 0; i < playouts; i++) {
                score0 += halfPoints0(game.playout(leaf.state, r));
            }
        }
        sendBackprop(leaf.parent, leaf.parentSlot, score0);
    }

    static int halfPoints0(int winner) {
        return winner == 0 ? 2 : winner == Game.DRAW ? 1 : 0;
    }

    void placed(int id, int slot, long child) {
        Node node = nodes[id];
        release(node.place(slot, child), node, slot);
    }

    void backprop(int id, int slot, long score0) {
        Node node = nodes[id];
        node.addWins(slot, node.toMove == 0 ? score0 : scale - score0);
        if (node.parent < 0) {
            search.rolloutCompleted();
        } else {
            sendBackprop(node.parent, node.parentSlot, score0);
        }
    }

    // The calls. Each lambda captures primitives only; the destination runs it with its own MctsWorker.

    private void sendSelect(long location) {
        int id = (int) location;
        calls.call(owner(location), (RemoteContextConsumer<MctsWorker>) w -> w.select(w.nodes[id]), null);
    }

    private void sendExpand(ThreadId dest, byte[] state, long parent, int slot, int move) {
        calls.callBuffer(dest, buffer -> ((MctsWorker) Fabric.currentContext()).expand(buffer, parent, slot, move),
                MemorySegment.ofArray(state), 0, state.length, null);
    }

    private void sendPlaced(long parent, int slot, long child) {
        int id = (int) parent;
        calls.call(owner(parent), (RemoteContextConsumer<MctsWorker>) w -> w.placed(id, slot, child), null);
    }

    private void sendBackprop(long location, int slot, long score0) {
        int id = (int) location;
        calls.call(owner(location), (RemoteContextConsumer<MctsWorker>) w -> w.backprop(id, slot, score0), null);
    }
}
