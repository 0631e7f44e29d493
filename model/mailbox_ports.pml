/*
 * fabricrpc mailbox protocol: N ports, several client and server threads.
 *
 * Two processes, client C and server S, each with its OWN memory region; no word is
 * read by both. Every remote write goes through a FIFO link (one per direction) and is
 * applied later by a "wire" process: in issue order, with arbitrary delay (RDMA RC;
 * shared memory is the zero-delay case). See model/README.md.
 *
 * Configuration (override with spin -D...):
 *   NPORTS 2..3, NCLIENTS 1..3, NSERVERS 1..2, NCALLS calls per client thread,
 *   STREAM 1 adds 2-exchange (streamed) SYNC calls, STREAM 2 also streamed calls whose
 *   last fragment is sent ASYNC, EMPTY_BIT marks the server's close-time
 *   empty reply in the packet, LIVENESS adds the LTL property "every client finishes",
 *   REORDER lets packet and flag writes of one send land in either order (negative
 *   check: must FAIL), UNFUSED splits the fused steps (see SPLIT) to validate the fusion,
 *   FABRIC adds the fabric's uses (callReturn): an ASYNC reply is read by whoever next
 *   locks the port instead of being overwritten, a Collector thread (a waiter on the
 *   future, or a worker's sweep) locks ports only to collect arrived replies, and a
 *   server may lock a pending port, peek at it and release it unread (Port.defer).
 *   CANCEL (with FABRIC) lets a call end without its reply: an ASYNC call's future is cancelled
 *   or expires after its port was released (the port keeps the token), a SYNC call's wait times
 *   out and closes the port with a DROP token; the late reply is collected and dropped.
 *   CANCEL_FREES (negative check: must FAIL) lets a cancel free the port at once instead.
 *   NO_LAND_CHECK drops the wires' ghost ownership assertions, NO_TIMEOUT a SYNC call's
 *   timeout (both for negative checks: the harm then shows where a call reads its reply).
 */
#ifndef FABRIC
#define FABRIC 0
#endif
#ifndef NPORTS
#define NPORTS 2
#endif
#ifndef NCLIENTS
#define NCLIENTS 2
#endif
#ifndef NSERVERS
#define NSERVERS 2
#endif
#ifndef NCALLS
#define NCALLS 2
#endif
#ifndef STREAM
#define STREAM 2
#endif
#ifndef CANCEL
#define CANCEL 0
#endif
#if CANCEL && !FABRIC
#error "CANCEL models the fabric's calls: it needs FABRIC=1"
#endif
#if CANCEL && NCLIENTS * NCALLS > 4
#error "CANCEL: at most 4 calls in all (outcome[], ABANDON, ALL_ENDED)"
#endif
#if NPORTS < 2 || NPORTS > 3
#error "NPORTS must be 2 or 3 (see OPEN_C / SCAN_S)"
#endif

/* Each side issues at most one send (packet + flag) per port before the other side answers. */
#define LINKCAP (2 * NPORTS)

/* Packet = (call tag, fragment index, bit); bit is "last fragment" in a request and
 * "empty reply" in a reply. Tag 0 means "no call". */
#define MKPKT(tag, frag, bit) ((tag) * 4 + (frag) * 2 + (bit))
#define TAG(v)  ((v) / 4)
#define FRAG(v) (((v) / 2) % 2)
#define BIT(v)  ((v) % 2)

mtype = { PKT, FLAG };

/* ---- client region (written only by the S->C wire) ---- */
bit  inC[NPORTS];     /* client owns port p iff inC[p] == outC[p] */
byte pktC[NPORTS];    /* reply copy; S's write lands only while C does not own p and no C thread reads it */
/* ---- client process-local ---- */
bit  outC[NPORTS];    /* value C last wrote into inS[p]; written only by the holder of lockC[p] */
bit  lockC[NPORTS];   /* test-and-set lock; a client thread touches port p only while holding it */

/* ---- server region (written only by the C->S wire) ---- */
bit  inS[NPORTS];     /* server owns port p iff inS[p] != outS[p] */
byte pktS[NPORTS];    /* request copy; C's write lands only while S does not own p and no S thread reads it */
/* ---- server process-local ---- */
bit  outS[NPORTS];    /* value S last wrote into inC[p]; written only by the holder of lockS[p] */
bit  lockS[NPORTS];   /* test-and-set lock; a server thread touches port p only while holding it */

/* ---- the links: pending remote writes (kind, port, value), delivered in issue order ---- */
chan c2s = [LINKCAP] of { mtype, byte, byte };
chan s2c = [LINKCAP] of { mtype, byte, byte };

/* ---- ghost state, only read by assertions ---- */
byte holdC[NPORTS];     /* client threads holding port p: always <= 1 */
byte holdS[NPORTS];     /* server threads holding port p: always <= 1 */
bit  readingC[NPORTS];  /* a client thread has read pktC[p] and not yet given p back (read window) */
bit  readingS[NPORTS];  /* a server thread has read pktS[p] and not yet given p back (read window) */
byte defers;            /* FABRIC: Port.defer steps taken by all server threads (bounded) */
byte asyncTag[NPORTS];  /* tag of the ASYNC call whose reply is still owed on port p (0: none) */
byte finished;          /* client threads that completed all their calls */
#if CANCEL
/* How call t (tag) ended, claimed once by CAS like the future: a reply wins (REPLIED) or a
 * cancel/deadline/timeout does (ABANDONED). AWAITING: an ASYNC call released its port. */
#define RUNNING   0
#define AWAITING  1
#define REPLIED   2
#define ABANDONED 3
byte outcome[5];
/* The claim's effect; the assert makes "ends exactly once" a check, not just the guards. */
#define CLAIM(t, o) assert(outcome[t] < REPLIED); outcome[t] = o
#define ENDED(t) ((t) > NCLIENTS * NCALLS || outcome[t] >= REPLIED)
#define ALL_ENDED (ENDED(1) && ENDED(2) && ENDED(3) && ENDED(4))
/* Port q is free, or reserved only for the landed late reply of an ended call (its next
 * opener drops it: the Java sweep skips done futures, so nothing else has to). */
#define SETTLED(q) (asyncTag[q] == 0 || outcome[asyncTag[q]] == ABANDONED && inC[q] == outC[q])
#define ALL_SETTLED (SETTLED(0) && SETTLED(1) && (NPORTS < 3 || SETTLED(NPORTS - 1)))
bit  dropTok[NPORTS];   /* port p's token is DROP (a SYNC call timed out): its reply goes nowhere */
#endif
byte served;            /* requests (final fragments) the server has processed */

/* SPLIT marks where two accesses are fused into one atomic step by a reduction argument;
 * with UNFUSED it ends the step there, so the fusion can be checked against the original. */
#ifdef UNFUSED
#define SPLIT } atomic {
#else
#define SPLIT
#endif

/* send = remote-write the packet, flip the out-box, remote-write the flag, in that order on
 * one FIFO link: the packet lands before the ownership change it is published by.
 * Used inside atomic: issuing both in one step hides nothing observable, because nothing
 * can see an issued write before the wire lands it, and the wire still lands them one at
 * a time with arbitrary delay. REORDER lets the flag be issued (and so land) first. */
#ifdef REORDER
#define SEND(link, outbox, p, v) \
	if \
	:: link!PKT, p, v; outbox[p] = 1 - outbox[p]; link!FLAG, p, outbox[p] \
	:: outbox[p] = 1 - outbox[p]; link!FLAG, p, outbox[p]; link!PKT, p, v \
	fi
#else
#define SEND(link, outbox, p, v) \
	link!PKT, p, v; SPLIT outbox[p] = 1 - outbox[p]; link!FLAG, p, outbox[p]
#endif

/* Collect the reply v owed on port p for its token (by an opener, a stale wait or a Collector).
 * CANCEL: the reply completes its call only if it wins the call's claim; else it is dropped. */
#if CANCEL
#define COLLECT(p, v) \
	assert(asyncTag[p] != 0 && TAG(v) == asyncTag[p]); \
	if \
	:: outcome[asyncTag[p]] == AWAITING -> assert(!dropTok[p]); CLAIM(asyncTag[p], REPLIED) \
	:: else -> assert(outcome[asyncTag[p]] == ABANDONED)   /* late reply of an abandoned call */ \
	fi; \
	asyncTag[p] = 0; dropTok[p] = 0
#else
#define COLLECT(p, v) assert(asyncTag[p] != 0 && TAG(v) == asyncTag[p]); asyncTag[p] = 0
#endif

/* The landing checks are ghost (an ownership view no process has); NO_LAND_CHECK drops them
 * so a negative check shows its harm where a thread reads a packet. */
#ifdef NO_LAND_CHECK
#define LAND_CHECK(c) skip
#else
#define LAND_CHECK(c) assert(c)
#endif

/* C->S link: lands C's remote writes in S's region, one per step, in issue order. */
active proctype WireC2S() {
	mtype k; byte p, v;
end:
	do
	:: atomic {
		c2s?k, p, v ->
		if
		:: k == PKT ->
			/* a request lands only while S does not own p and no server thread reads pktS[p] */
			LAND_CHECK(inS[p] == outS[p] && !readingS[p]);
			pktS[p] = v
		:: else -> inS[p] = v
		fi;
		k = 0; p = 0; v = 0
	   }
	od
}

/* S->C link: lands S's remote writes in C's region, one per step, in issue order. */
active proctype WireS2C() {
	mtype k; byte p, v;
end:
	do
	:: atomic {
		s2c?k, p, v ->
		if
		:: k == PKT ->
			/* a reply lands only while C does not own p and no client thread reads pktC[p] */
			LAND_CHECK(inC[p] != outC[p] && !readingC[p]);
			pktC[p] = v
		:: else -> inC[p] = v
		fi;
		k = 0; p = 0; v = 0
	   }
	od
}

/* open: CAS lockC[q] 0 -> 1 (blocks while taken, i.e. the thread retries) */
#define OPEN_C(q) :: lockC[q] == 0 -> lockC[q] = 1; p = q

/* close: the read window (if any) ends with the lock */
#define CLOSE_C readingC[p] = 0; holdC[p]--; lockC[p] = 0; p = 0; v = 0; tag = 0; frag = 0; async = 0

proctype Client(byte tid) {
	byte i, p, v, tag, frag;
	bit more, async, stale;   /* more: a streamed fragment follows this exchange */

	for (i : 0 .. NCALLS - 1) {
		/* call shape: SYNC or ASYNC, single or (STREAM) 2-exchange; then open.
		 * Lock then read inC[p] is one step: the CAS commutes rightwards (no other client
		 * thread can touch p once it succeeds), so nothing is lost by fusing them. */
		atomic {
			tag = tid * NCALLS + i + 1;
			if
			:: more = 0; async = 0                 /* SYNC */
			:: more = 0; async = 1                 /* ASYNC */
			:: STREAM >= 1 -> more = 1; async = 0  /* streamed, SYNC */
			:: STREAM >= 2 -> more = 1; async = 1  /* streamed, last fragment ASYNC */
			fi;
			/* any free port: a "prefer ports we own" heuristic only narrows this choice */
			if
			OPEN_C(0)
			OPEN_C(1)
#if NPORTS > 2
			OPEN_C(2)
#endif
			fi;
			holdC[p]++;
			assert(holdC[p] == 1);
			SPLIT
			stale = (inC[p] != outC[p]);
			if
			:: !stale && FABRIC && asyncTag[p] != 0 ->
				/* the fabric collects it for the call's future (ReplyCollector) before reuse */
				readingC[p] = 1; v = pktC[p]; COLLECT(p, v)
			:: !stale && (!FABRIC || asyncTag[p] == 0) -> asyncTag[p] = 0   /* overwritten unread */
			:: else
			fi
		}
		if
		:: stale ->
			/* an earlier ASYNC call left p awaiting its reply: wait for it, read it, discard it */
			atomic { inC[p] == outC[p] -> readingC[p] = 1; v = pktC[p] };
		:: else
		fi;

exchange:
		atomic {
			/* the previous read of pktC[p] (discarded async reply, or stream ack) ends here */
			readingC[p] = 0;
			if
			:: stale -> COLLECT(p, v); stale = 0
			:: else
			fi;
			v = 0;
			assert(inC[p] == outC[p] && lockC[p] == 1);   /* C writes pktS[p] only while owning p */
			SEND(c2s, outC, p, MKPKT(tag, frag, 1 - more));
			if
			:: !more && async ->
				asyncTag[p] = tag   /* close without waiting; the next user cleans up */
#if CANCEL
				; assert(outcome[tag] == RUNNING); outcome[tag] = AWAITING
#endif
			:: else
			fi
		}
		if
		:: !more && async -> atomic { CLOSE_C }
		:: else ->
			if
			:: /* recv: wait for ownership back, read the reply (or ack): it must be this call's */
				atomic {
					inC[p] == outC[p] ->
					readingC[p] = 1; v = pktC[p];
					assert(TAG(v) == tag && FRAG(v) == frag);
					if
					:: more -> more = 0; frag = 1; goto exchange   /* next fragment, same lock */
					:: else
					fi
#if CANCEL
					; assert(outcome[tag] == RUNNING); CLAIM(tag, REPLIED)
#endif
				};
				atomic { CLOSE_C }
#if CANCEL && !defined(NO_TIMEOUT)
			:: /* the wait times out (a call's last exchange only, even as the reply lands):
			    * close with a DROP token, the next holder collects the late reply and drops it */
				atomic {
					!more ->
					assert(outcome[tag] == RUNNING); CLAIM(tag, ABANDONED);
					asyncTag[p] = tag; dropTok[p] = 1;
					CLOSE_C
				}
#endif
			fi
		fi
	}
	finished++
}

/* tryOpen scan: one read of inS[q] finds a port with a pending request */
#define SCAN_S(q) :: inS[q] != outS[q] -> p = q

proctype Server() {
	byte p, v, tag, frag;
	bit emptyReply;

end_idle:
	if
	SCAN_S(0)
	SCAN_S(1)
#if NPORTS > 2
	SCAN_S(2)
#endif
	fi;
	/* CAS the lock, then recheck under it (someone may have served p since the scan).
	 * Fused into one step for the same reason as the client's open. */
	atomic {
		if
		:: lockS[p] == 0 -> lockS[p] = 1
		:: else -> p = 0; goto end_idle   /* CAS lost: another server thread holds p */
		fi;
		holdS[p]++;
		assert(holdS[p] == 1);
		SPLIT
		if
		:: inS[p] == outS[p] -> holdS[p]--; lockS[p] = 0; p = 0; goto end_idle
		:: else
		fi
	}
#if FABRIC
	/* Port.defer: peek at the owned request and release the port unread, a bounded number
	 * of times (the fabric defers until one-way calls it must follow have run) */
	if
	:: defers < NSERVERS ->
		atomic {
			readingS[p] = 1; v = pktS[p]; assert(TAG(v) != 0);
			readingS[p] = 0; v = 0; defers++;
			holdS[p]--; lockS[p] = 0; p = 0; goto end_idle
		}
	:: true
	fi;
#endif

recv:
	/* wait for (the next fragment's) ownership, then read the request; the read window
	 * stays open until ownership is handed back */
	atomic {
		inS[p] != outS[p] ->
		readingS[p] = 1; v = pktS[p];
		/* a call's fragments arrive in order, all carrying the call's tag */
		assert(TAG(v) != 0 && FRAG(v) == frag && (frag == 0 || TAG(v) == tag));
		tag = TAG(v)
	}
	if
	:: BIT(v) == 0 ->
		/* streamed: ack the fragment (ownership back to C), keep the lock */
		atomic {
			readingS[p] = 0;
			assert(lockS[p] == 1);
			SEND(s2c, outS, p, MKPKT(tag, frag, 0));
			v = 0; frag++
		};
		goto recv
	:: else
	fi;
	/* Send the reply and close. A server closing without having replied sends an empty
	 * reply, so close always ends with a send. The empty reply echoes the call's header;
	 * payloads are abstracted, so by default both are the same send. EMPTY_BIT marks it
	 * in the packet (a distinct value, ~3x the states) to show the client accepts it. */
	atomic {
		readingS[p] = 0;
		served++;
		assert(inS[p] != outS[p] && lockS[p] == 1);   /* S writes pktC[p] only while owning p */
#ifdef EMPTY_BIT
		if :: emptyReply = 0 :: emptyReply = 1 fi;
#endif
		SEND(s2c, outS, p, MKPKT(tag, frag, emptyReply));
		holdS[p]--; lockS[p] = 0;
		p = 0; v = 0; tag = 0; frag = 0; emptyReply = 0
	}
	goto end_idle
}

#if FABRIC
/* tryCollect: a client-side thread that is not calling (a waiter on a future, a worker's
 * sweep) locks a port only if an ASYNC reply has landed there, reads it, and unlocks.
 * CANCEL: never for a DROP token (no future); for a future cancelled meanwhile it drops the
 * reply (its claim loses: the cancel commutes with the lock, so this covers that race). */
#if CANCEL
#define COLLECT_C(q) :: lockC[q] == 0 && asyncTag[q] != 0 && !dropTok[q] && inC[q] == outC[q] -> lockC[q] = 1; p = q
#else
#define COLLECT_C(q) :: lockC[q] == 0 && asyncTag[q] != 0 && inC[q] == outC[q] -> lockC[q] = 1; p = q
#endif

active proctype Collector() {
	byte p, v;
end_collect:
	do
	:: atomic {
		if
		COLLECT_C(0)
		COLLECT_C(1)
#if NPORTS > 2
		COLLECT_C(2)
#endif
		fi;
		holdC[p]++;
		assert(holdC[p] == 1);
		readingC[p] = 1; v = pktC[p];
		COLLECT(p, v);   /* the reply of the call whose future waits for it */
		readingC[p] = 0; holdC[p]--; lockC[p] = 0; p = 0; v = 0
	   }
	od
}
#endif

#if CANCEL
/* future.cancel() or the agent's deadline sweep: completes a released ASYNC call's future
 * without its reply (the CAS claim) and leaves the port alone: it stays reserved, its token
 * kept, until the late reply is collected (and dropped, as the claim is taken). */
#ifdef CANCEL_FREES
/* The bad ordering: the cancel also frees an idle port at once, clearing its token and taking
 * the packet back (outbox := inbox), so the next caller sends before the late reply lands. */
#define FREE_PORT(t, q) \
	if \
	:: asyncTag[q] == t && lockC[q] == 0 -> asyncTag[q] = 0; outC[q] = inC[q] \
	:: else \
	fi;
#else
#define FREE_PORT(t, q)
#endif
#if NPORTS > 2
#define ABANDON(t) :: t <= NCLIENTS * NCALLS && outcome[t] == AWAITING -> \
	CLAIM(t, ABANDONED); FREE_PORT(t, 0) FREE_PORT(t, 1) FREE_PORT(t, 2) skip
#else
#define ABANDON(t) :: t <= NCLIENTS * NCALLS && outcome[t] == AWAITING -> \
	CLAIM(t, ABANDONED); FREE_PORT(t, 0) FREE_PORT(t, 1) skip
#endif

active proctype Abandoner() {
end_abandon:
	do
	:: atomic { if ABANDON(1) ABANDON(2) ABANDON(3) ABANDON(4) fi }
	od
}
#endif

/* Fires only when nothing else can move: then every started call must have completed. */
active proctype Watchdog() {
	timeout ->
	assert(finished == NCLIENTS && served == NCLIENTS * NCALLS && empty(c2s) && empty(s2c))
#if CANCEL
	/* every call ended (its claim taken, once: CLAIM), every port free or settled */
	; assert(ALL_ENDED && ALL_SETTLED)
#endif
}

#ifdef LIVENESS
#if CANCEL
/* also every call ends (reply, cancel, deadline or timeout) and every late reply lands: a
 * client that opens a port reserved for a late reply waits for it, drops it, makes its call */
ltl all_finish_all_end { <> (finished == NCLIENTS && ALL_ENDED && ALL_SETTLED) }
#else
/* every client thread completes all its calls (check with weak fairness: pan -a -f) */
ltl all_finish { <> (finished == NCLIENTS) }
#endif
#endif

init {
	byte t;
	atomic {
		for (t : 0 .. NCLIENTS - 1) { run Client(t) }
		for (t : 0 .. NSERVERS - 1) { run Server() }
	}
}
