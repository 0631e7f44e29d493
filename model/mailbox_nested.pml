/*
 * fabricrpc mailbox ports as callReturn uses them between two workers calling each other.
 *
 * Worker w (one thread of process w) calls worker 1-w over channel w: it is the client of
 * channel w and the server of channel 1-w. Its call waits for a reply streamed in FRAGS
 * fragments (all but the last acknowledged by the caller). While it waits, the worker serves
 * the other's call (the wait hook: Fabric.processCalls) and streams that reply, waiting for
 * each acknowledgement in a nested wait. The nested wait advances the worker's suspended
 * receive below it (Port.advanceSuspended): it takes and acks a reply fragment with more to
 * follow; the last one stays in the packet for the receive itself.
 *
 * A hand-over (packet, then flipped outbox bit) is one message on a FIFO link landing both
 * at once, with arbitrary delay: the order of packet and flag is mailbox_ports.pml's subject;
 * this model is about progress of nested waits. Each side sends at most once before the
 * other answers, so each link holds at most one hand-over.
 *
 *   FRAGS     fragments of each reply (2..4)
 *   NOADVANCE the nested wait does not advance the receive below it (the old ordering):
 *             negative check, both workers stall (the watchdog's assertion must FAIL)
 */
#ifndef FRAGS
#define FRAGS 3
#endif
#if FRAGS < 2 || FRAGS > 4
#error "FRAGS must be 2..4"
#endif

#define REQ  1   /* the call (one packet) */
#define MORE 2   /* a reply fragment with more to follow */
#define LAST 3   /* the reply's last fragment */
#define ACK  4   /* the caller's acknowledgement of a MORE fragment */

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

/* Serves the call waiting on channel s (owned): reads it, streams FRAGS fragments. With
 * `suspended`, the worker's own receive on channel c waits below: each ack wait advances it. */
inline serve(s, c, suspended) {
	atomic { assert(OWNS(s) && pktS[s] == REQ); sent = 0 }
	do
	:: atomic { sent == FRAGS - 1 -> SENDS(s, LAST); servedCalls++; break }
	:: atomic { sent < FRAGS - 1 -> SENDS(s, MORE); sent++ };
		do
		:: atomic { OWNS(s) -> assert(pktS[s] == ACK); break }
#ifndef NOADVANCE
		:: atomic { suspended && OWNC(c) && pktC[c] == MORE -> got[c]++; SENDC(c, ACK) }
#endif
		od
	od
}

proctype Worker(byte me) {
	byte sent, them;
	bit served;
	them = 1 - me;
	/* callReturn: hand the call over, then receive the reply; the receive acks MORE fragments */
	atomic { assert(OWNC(me)); SENDC(me, REQ) }
	do
	:: atomic {
		OWNC(me) ->
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
