/*
 * fabricrpc waiting calls (RETRY_ASYNC's AsyncQueueChannel, ovfl's OverflowAggregator): calls the
 * messenger refused (ring full) wait in a local queue and are drained into the messenger, oldest
 * first, by the sender or by the background agent, under a drain claim.
 *
 * Threads: the sender (the messenger's owner), the agent, the receiver (consumes the ring).
 * Shared words:
 *   claim   the drain claim: a position advanced by CAS from even (free) to odd (held), and by the
 *           holder's release store to the next even value. Whoever holds it owns the queue and the
 *           messenger. Modelled as 0 / 1 (the count's parity); holder is a ghost.
 *   queued  calls wait: set by the sender (holding the claim) when it queues a call; cleared by
 *           the holder whose drain emptied the queue, as the drain's last touch of the messenger
 *           (release). The sender's direct path reads it without the claim (acquire): false means
 *           the queue is empty and the messenger is the sender's.
 * Sender, per call: if !queued, send directly when the ring has room; else claim, drain if queued,
 *   send directly if the queue emptied and the ring has room, else queue the call; release.
 *   At the end: flush (claim, drain until empty waiting for room, release).
 * Agent, at any moment: if queued, try the claim (one CAS, no wait); if held, drain what fits; release.
 * Receiver: takes records from the ring in order.
 * Checks: per-sender FIFO and exactly once (the receiver sees 1, 2, ..., NREC), the messenger never
 * has two writers at once (ghost), no deadlock (valid end states: every call received).
 *
 *   RING  the messenger's room (records)   NREC  calls
 * Negative checks (must FAIL):
 *   CLEAR_EARLY    a drain clears queued before it moves the last waiting call
 *   NO_DRAIN_FIRST the sender's slow path sends directly without draining the waiting calls first
 *   AGENT_NO_CLAIM the agent drains without the claim
 */
#ifndef RING
#define RING 1
#endif
#ifndef NREC
#define NREC 3
#endif

chan ring = [RING] of { byte };
byte q[NREC];                   /* the queue: q[head .. tail) wait, oldest first */
byte head;
byte tail;
bit queued;
bit claim;
/* ---- ghost ---- */
byte writers;                   /* threads inside the messenger right now */
byte received;
bit sdone;

/* One append into the messenger, with room checked by the caller. */
inline append(v) {
	atomic { writers++; assert(writers == 1) };
	ring ! v;
	writers--
}

/* Moves waiting calls into the ring while it has room; ok = 1 once the queue is empty. */
inline drain(ok) {
	ok = 0;
	do
	:: head < tail && nfull(ring) ->
#ifdef CLEAR_EARLY
		if :: head + 1 == tail -> queued = 0 :: else fi;
#endif
		append(q[head]);
		head++
	:: head < tail && full(ring) -> break
	:: head == tail ->
		head = 0; tail = 0;
		queued = 0;             /* release: the sender's direct path may take the messenger */
		ok = 1;
		break
	od
}

inline claimWait() {
	atomic { claim == 0 -> claim = 1 }
}

proctype Sender() {
	byte n = 1;
	bit ok;
	do
	:: n <= NREC ->
		if
		:: queued == 0 && nfull(ring) ->           /* acquire queued; the direct path */
			append(n)
		:: else ->
			claimWait();
#ifdef NO_DRAIN_FIRST
			ok = 1;   /* sends past the waiting calls */
#else
			if
			:: queued -> drain(ok)
			:: else -> ok = 1
			fi;
#endif
			if
			:: ok && nfull(ring) -> append(n)
			:: else ->
				q[tail] = n;
				tail++;
				queued = 1
			fi;
			claim = 0                              /* release */
		fi;
		n++
	:: else -> break
	od;
	/* flush: drain until empty, waiting for the receiver's room */
	claimWait();
	do
	:: queued -> drain(ok); if :: !ok -> nfull(ring) -> skip :: else fi
	:: else -> break
	od;
	claim = 0;
	sdone = 1
}

proctype Agent() {
	bit ok;
	do
	:: queued ->
#ifdef AGENT_NO_CLAIM
		drain(ok)
#else
		atomic {
			if
			:: claim == 0 -> claim = 1
			:: else -> goto skipped
			fi
		};
		if
		:: queued -> drain(ok)
		:: else
		fi;
		claim = 0;
skipped:
		skip
#endif
	:: sdone && !queued -> break
	od
}

proctype Receiver() {
	byte v;
	do
	:: received < NREC ->
		ring ? v;
		assert(v == received + 1);             /* FIFO, exactly once */
		received++
	:: else -> break
	od
}

init {
	atomic {
		run Sender();
		run Agent();
		run Receiver()
	}
}
