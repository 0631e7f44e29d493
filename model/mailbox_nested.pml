/*
 * fabricrpc mailbox ports as callReturn uses them between two workers calling each other.
 *
 * Worker w (one thread of process w) calls worker 1-w over channel w: it is the client of
 * channel w and the server of channel 1-w. Its call streams a request of REQFRAGS fragments
 * and then waits for a reply of FRAGS fragments (every fragment but a message's last is
 * acknowledged by the peer before the next is sent). While it waits (for an ack or for the
 * reply) the worker serves the other's call (the wait hook: Fabric.processCalls): it reads
 * the request, acking its fragments, and streams the reply, each such wait nested in its own.
 * A nested wait advances the worker's suspended call below it (Port.advanceSuspended): posts
 * the request's next fragment once acked, takes and acks a reply fragment with more to
 * follow; the reply's last fragment stays in the packet for the receive itself.
 *
 * A hand-over (packet, then flipped outbox bit) is one message on a FIFO link landing both
 * at once, with arbitrary delay: the order of packet and flag is mailbox_ports.pml's subject;
 * this model is about progress of nested waits. Each side sends at most once before the
 * other answers, so each link holds at most one hand-over.
 *
 *   FRAGS     fragments of each reply (1..4)
 *   REQFRAGS  fragments of each request (1..4)
 *   NOADVANCE nested waits do not advance the call below them (the old ordering): negative
 *             check, both workers stall (the watchdog's assertion must FAIL)
 */
#ifndef FRAGS
#define FRAGS 3
#endif
#ifndef REQFRAGS
#define REQFRAGS 1
#endif
#if FRAGS < 1 || FRAGS > 4 || REQFRAGS < 1 || REQFRAGS > 4
#error "FRAGS and REQFRAGS must be 1..4"
#endif

#define REQ   1   /* the request's last (or only) fragment */
#define MORE  2   /* a reply fragment with more to follow */
#define LAST  3   /* the reply's last (or only) fragment */
#define ACK   4   /* the acknowledgement of a fragment with more to follow */
#define RMORE 5   /* a request fragment with more to follow */

/* channel c: client side in worker c (its region: inC, pktC; local: outC) */
bit  inC[2];
bit  outC[2];
byte pktC[2];
/* channel c: server side in worker 1-c (its region: inS, pktS; local: outS) */
bit  inS[2];
bit  outS[2];
byte pktS[2];

chan toS[2] = [1] of { byte, bit };   /* client c's hand-overs to its server */
chan toC[2] = [1] of { byte, bit };   /* server's hand-overs to client c */

/* ghost state, read by assertions only */
byte got[2];       /* reply fragments of worker w's call taken so far (by its receive or a nested wait) */
byte reqRead[2];   /* request fragments of worker w's call read by its server */
byte done;         /* workers whose call returned with the whole reply */
byte servedCalls;  /* calls served to the end */

#define OWNC(c) (inC[c] == outC[c])
#define OWNS(c) (inS[c] != outS[c])
#define SENDC(c, v) outC[c] = 1 - outC[c]; toS[c]!v, outC[c]
#define SENDS(c, v) outS[c] = 1 - outS[c]; toC[c]!v, outS[c]

active proctype Wire() {
	byte v; bit f;
end:
	do
	:: atomic { toS[0]?v, f -> assert(!OWNS(0)); pktS[0] = v; inS[0] = f; v = 0; f = 0 }
	:: atomic { toS[1]?v, f -> assert(!OWNS(1)); pktS[1] = v; inS[1] = f; v = 0; f = 0 }
	:: atomic { toC[0]?v, f -> assert(!OWNC(0)); pktC[0] = v; inC[0] = f; v = 0; f = 0 }
	:: atomic { toC[1]?v, f -> assert(!OWNC(1)); pktC[1] = v; inC[1] = f; v = 0; f = 0 }
	od
}

/* Posts the next fragment of worker c's request (it owns channel c, holding an ack or nothing yet). */
#define POST_REQUEST(c) \
	if \
	:: reqSent == REQFRAGS - 1 -> SENDC(c, REQ); reqSent = REQFRAGS \
	:: else -> SENDC(c, RMORE); reqSent++ \
	fi

/* Advances worker c's call, suspended below a nested wait (FragmentStream.advance): a streamed request
 * posts its next fragment once acked; a receive takes and acks a fragment with more to follow. */
#ifdef NOADVANCE
#define ADVANCE(c, suspended)
#else
#define ADVANCE(c, suspended) \
	:: atomic { suspended && OWNC(c) && reqSent < REQFRAGS && pktC[c] == ACK -> POST_REQUEST(c) } \
	:: atomic { suspended && OWNC(c) && reqSent == REQFRAGS && pktC[c] == MORE -> got[c]++; SENDC(c, ACK) }
#endif

/* Serves the call waiting on channel s (owned): reads its fragments, acking all but the last,
 * then streams FRAGS reply fragments. With `suspended`, the worker's own call on channel c
 * waits below: every wait here advances it. */
inline serve(s, c, suspended) {
	atomic { assert(OWNS(s)); v = pktS[s] }
	do
	:: atomic { v == REQ -> reqRead[1 - s]++; assert(reqRead[1 - s] == REQFRAGS); sent = 0; break }
	:: atomic { v == RMORE -> reqRead[1 - s]++; SENDS(s, ACK) };
		do
		:: atomic { OWNS(s) -> v = pktS[s]; assert(v == RMORE || v == REQ); break }
		ADVANCE(c, suspended)
		od
	od;
	do
	:: atomic { sent == FRAGS - 1 -> SENDS(s, LAST); servedCalls++; break }
	:: atomic { sent < FRAGS - 1 -> SENDS(s, MORE); sent++ };
		do
		:: atomic { OWNS(s) -> assert(pktS[s] == ACK); break }
		ADVANCE(c, suspended)
		od
	od
}

proctype Worker(byte me) {
	byte sent, them, v, reqSent;
	bit served;
	them = 1 - me;
	/* callReturn: stream the request (each fragment but the last waits for its ack), then
	 * receive the reply, acking its fragments but the last */
	atomic { assert(OWNC(me)); POST_REQUEST(me) }
	do
	:: atomic { OWNC(me) && reqSent < REQFRAGS -> assert(pktC[me] == ACK); POST_REQUEST(me) }
	:: atomic {
		OWNC(me) && reqSent == REQFRAGS ->
		if
		:: pktC[me] == MORE -> got[me]++; SENDC(me, ACK)
		:: pktC[me] == LAST -> got[me]++; assert(got[me] == FRAGS); break
		fi
	   }
	:: atomic { !OWNC(me) && !served && OWNS(them) -> served = 1 };
		serve(them, me, 1)   /* the wait hook: the other's call, nested in this wait */
	od;
	done++;
	/* its call returned: it goes on serving (processCalls) until the other's call has run */
	if
	:: served
	:: else -> OWNS(them); served = 1; serve(them, me, 0)
	fi
}

/* Fires only when nothing else can move: then both calls returned and both were served. */
active proctype Watchdog() {
	timeout ->
	assert(done == 2 && servedCalls == 2 && empty(toS[0]) && empty(toS[1]) && empty(toC[0]) && empty(toC[1]))
}

init {
	atomic { run Worker(0); run Worker(1) }
}
