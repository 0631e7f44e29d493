/*
 * fabricrpc Messenger, mapped-window publication (shared memory), around a single transmit position
 * claimed by CAS.
 *
 * Threads: the owner (the messenger's sender thread), the background agent and the receiving
 * thread (SenderInbox over shared memory, as in messenger_window.pml). No deferral, no FOLLOWS.
 *
 * Shared words:
 *   T  the transmit word (gen, off, BUSY): the records below off are transmitted (their headers
 *      stored, or copied from staging); BUSY: a claim is in progress. Changed only by a claim (CAS
 *      setting BUSY from a value read without it; the claimant alone transmits, then stores the new
 *      value, BUSY cleared) or by the owner's plain store when T == (gen, A.off), not BUSY: a direct
 *      send, the seal, the move to the next chunk.
 *   A  the append word (gen, off, IN_STAGING): records below off are framed. Owner only, release.
 *   H  the held header (offset, header) of the first record of an untransmitted window range.
 * Owner, per call:
 *   append, a batch in the window: the payload, then the header held in H if the record is at T.off
 *     (acquire: it starts the untransmitted range), else stored into the chunk with release; then
 *     A := (gen, p + 1) (release);
 *   append, a batch in staging (STAGED, small records): framed in staging, A := (gen, p + 1, IN_STAGING).
 *     The placement is chosen only when T.off == A.off (a new batch): a pending range is homogeneous;
 *   direct send: transmit what is pending first (a claim), then the payload, the header with
 *     release, T := (gen, p + 1) (plain store: nothing is pending); A stays behind (a claimant finds
 *     t >= a: nothing to claim) until the next append stores it;
 *   optionally a flush (transmit) after any call; at the end a flush or nothing.
 * Transmitting [t, a): a window range: store H's header at t if H is at t (else all its headers
 * are out already); a staging range: copy staging [t, a) into the chunk, the first header last.
 * Seal: transmit what is pending, the chunk's sequence words (first record, count; plain stores), the
 * seal header with release (the receiver checks the words when it reads the seal), T := (gen, CAP+1), A := (gen, CAP+1),
 * in that order; wait for the next chunk to be free, T := (gen+1, 0), A := (gen+1, 0).
 * Agent, at any moment: acquire A, then T; unless T is BUSY, of another generation, or t >= a,
 * claim by CAS from the value read, transmit [t, a), release T := (gen, a).
 *
 * Every step is sequentially consistent; a release store is modelled by its place in program order
 * (after the stores it publishes), an acquiring load likewise (before the loads it guards).
 *
 *   NCH  chunks in the ring     CAP  record slots per chunk (+1 for the seal)   NREC  calls
 *   STAGED  a batch may be framed in staging (copied by the claimant) as well as in the window
 *   NO_GHOST  drops the ghost checks on T's stores (to see what the receiver sees)
 * Negative checks (must FAIL):
 *   PLAIN_STORE    the owner transmits a pending range without claiming T, then stores T plainly
 *   RELEASE_EARLY  a claimant stores the released T before it transmits (stores or copies)
 *   AGENT_NO_CAS   the agent transmits without claiming (reads T, transmits, stores T)
 *   A_BEFORE_T     a direct send and the seal store A, before T: the agent can claim across it
 */
#ifndef NCH
#define NCH 1
#endif
#ifndef CAP
#define CAP 2
#endif
#ifndef NREC
#define NREC 3
#endif
#ifndef STAGED
#define STAGED 1
#endif
#define NSLOTS (CAP + 1)
#define MEM (NCH * NSLOTS)
#define SEALH 15                /* the seal's header (no record has this sequence number) */
#define NONE 255

/* T: gen << 4 | off << 1 | BUSY */
#define BUSY 1
#define TV(g, o) ((g) * 16 + (o) * 2)
#define TGEN(x) ((x) / 16)
#define TOFF(x) (((x) / 2) % 8)
#define TPOS(x) ((x) / 2)       /* (gen, off), ordered */
/* A: gen << 4 | IN_STAGING << 3 | off */
#define AV(g, stg, o) ((g) * 16 + (stg) * 8 + (o))
#define AGEN(x) ((x) / 16)
#define ASTG(x) (((x) / 8) % 2)
#define AOFF(x) ((x) % 8)
/* H: offset << 4 | header, or NONE */
#define HELD(at, h) ((at) * 16 + (h))
#define HAT(x) ((x) / 16)
#define HHDR(x) ((x) % 16)

/* ---- receiver's chunks (stored into directly by owner and agent over the window) ---- */
byte hdr[MEM];
byte pay[MEM];
byte sfirst[NCH];               /* the sequence words of each chunk: its first record's number */
byte scount[NCH];               /* ... and its record count */
/* ---- owner's staging (small records), read by the claimant's copy ---- */
byte shdr[NSLOTS];
byte spay[NSLOTS];
/* ---- shared messenger state ---- */
byte T;                         /* the transmit word */
byte A;                         /* the append word */
byte H = NONE;                  /* the held header */
byte consumed;                  /* consumed-chunk count pushed by the receiver */
/* ---- ghost ---- */
byte ran;
bit sdone;

/* a store into chunk generation g at slot s: only into a chunk the receiver has freed (for this
 * generation) and not finished */
#define WSTORE(arr, g, s, v) atomic { assert(consumed <= (g) && (g) < consumed + NCH); arr[((g) % NCH) * NSLOTS + (s)] = (v) }

/* A store of T: (gen, off) never goes backwards (ghost check on every store). */
inline setT(v) {
	atomic {
#ifndef NO_GHOST
		assert(TPOS(v) >= TPOS(T));
#endif
		T = v
	}
}

/* Transmit [xt, xa) of chunk generation xg: a staging range is copied (payloads and later headers,
 * then the first header, release); a window range is published by storing the held header if it
 * is at xt. */
inline transmitRange(xt, xa, xg, stg) {
	if
	:: stg ->
		atomic {
			i = xt;
			do
			:: i < xa ->
				WSTORE(pay, xg, i, spay[i]);
				if :: i > xt -> WSTORE(hdr, xg, i, shdr[i]) :: else fi;
				i++
			:: else -> break
			od;
			i = 0
		};
		WSTORE(hdr, xg, xt, shdr[xt])
	:: !stg ->
		h = H;   /* acquire (stored before A's release) */
		if
		:: h != NONE && HAT(h) == xt -> WSTORE(hdr, xg, xt, HHDR(h))
		:: else
		fi;
		h = 0
	fi
}

/* Owner: transmit what is pending. The claim: wait until T is not BUSY, then CAS from the value
 * read (a failed CAS changes nothing: one step). Nothing pending: no claim. */
inline transmit() {
	atomic {
		!(T & BUSY) -> tv = T;
		if
		:: TOFF(tv) == pos -> claimed = 0
		:: else ->
#ifndef PLAIN_STORE
			T = tv | BUSY;
#endif
			claimed = 1
		fi
	};
	if
	:: claimed ->
		t = TOFF(tv);
#ifndef NO_GHOST
		assert(TGEN(tv) == gen && t < pos);   /* T is of this chunk, behind A */
#endif
#ifdef RELEASE_EARLY
		setT(TV(gen, pos));   /* BAD: released before the transmission */
#endif
		transmitRange(t, pos, gen, !biw);
#ifndef RELEASE_EARLY
		setT(TV(gen, pos));   /* release */
#endif
		claimed = 0; t = 0
	:: else
	fi;
	tv = 0
}

/* A direct send's (or the seal's) plain store of T, then A, after transmit(): T == (gen, pos). */
inline advanceTA(np) {
#ifndef NO_GHOST
	assert(T == TV(gen, pos));   /* nothing pending, no claim: the plain store overwrites nothing */
#endif
	pos = np;
#ifdef A_BEFORE_T
	A = AV(gen, 0, pos);   /* BAD: the agent may read this A and the old T */
	setT(TV(gen, pos));
#else
	setT(TV(gen, pos));    /* plain store, release */
	A = AV(gen, 0, pos)    /* release */
#endif
}

/* A direct send's store: T only (Messenger.sendKnownInWindow). A stays behind T, which a claimant
 * reads as nothing pending (it claims only when T.off < A.off); the next append stores A again. */
inline advanceT(np) {
#ifdef A_BEFORE_T
	advanceTA(np)
#else
#ifndef NO_GHOST
	assert(T == TV(gen, pos));   /* nothing pending, no claim: the plain store overwrites nothing */
#endif
	pos = np;
	setT(TV(gen, pos))    /* plain store, release */
#endif
}

active proctype Owner() {
	byte seq = 1, pos, gen, tv, t, h, i;
	bit claimed, biw = 1;   /* the current batch is in the window (else staging) */

	do
	:: seq > NREC -> break
	:: else ->
		if
		:: pos == CAP ->   /* seal: transmit, the seal header (release), wait for the next chunk */
			transmit();
			atomic { sfirst[gen % NCH] = seq - CAP; scount[gen % NCH] = CAP };   /* plain stores */
			WSTORE(hdr, gen, CAP, SEALH);
			advanceTA(CAP + 1);
			atomic { gen + 1 - consumed <= NCH - 1 -> gen++; pos = 0 };
			setT(TV(gen, 0));   /* plain store: nothing pending */
			A = AV(gen, 0, 0)
		:: else
		fi;
		if
		:: /* direct send (no aggregation): transmit what is pending first */
			tv = T;   /* acquire */
			if
			:: tv == TV(gen, pos)
			:: else -> transmit()
			fi;
			WSTORE(pay, gen, pos, seq);
			WSTORE(hdr, gen, pos, seq);   /* release */
			advanceT(pos + 1)
		:: /* append (aggregation) */
			tv = T;   /* acquire */
			if
			:: TOFF(tv) == pos ->   /* a new batch: choose its placement */
				if :: biw = 1 :: STAGED -> biw = 0 fi
			:: else
			fi;
			if
			:: biw ->
				WSTORE(pay, gen, pos, seq);
				if
				:: TOFF(tv) == pos -> H = HELD(pos, seq)   /* starts the untransmitted range */
				:: else -> WSTORE(hdr, gen, pos, seq)      /* release */
				fi
			:: else ->
				atomic { spay[pos] = seq; shdr[pos] = seq }
			fi;
			pos++;
			A = AV(gen, !biw, pos)   /* release */
		fi;
		seq++; tv = 0;
		if
		:: transmit()   /* a flush (or the aggregator's batch is full) */
		:: skip
		fi
	od;
	/* flush, or go quiet and leave what is pending to the agent */
	if
	:: transmit()
	:: skip
	fi;
	sdone = 1
}

/* The agent. "At any moment": it looks again whenever A or T changed since its last look (a look
 * at the same values decides the same; this keeps the model free of idle cycles for -DNP). */
active proctype Agent() {
	byte av, tv, t, a, g, h, i, seenA = NONE, seenT = NONE;
	bit ok;
end:
	do
	:: atomic { (A != seenA || T != seenT) -> av = A };   /* acquire A */
		atomic {   /* acquire T, and the CAS from the value read */
			tv = T; seenA = av; seenT = tv;
			t = TOFF(tv); a = AOFF(av); g = AGEN(av);
			if
			:: !(tv & BUSY) && TGEN(tv) == g && t < a ->
#ifndef AGENT_NO_CAS
				T = tv | BUSY;
#endif
				ok = 1
			:: else -> ok = 0
			fi
		};
		if
		:: ok ->
#ifdef RELEASE_EARLY
			setT(TV(g, a));   /* BAD: released before the transmission */
#endif
			transmitRange(t, a, g, ASTG(av));
#ifndef RELEASE_EARLY
			setT(TV(g, a))    /* release */
#endif
		:: else
		fi;
		av = 0; tv = 0; t = 0; a = 0; g = 0; ok = 0
	od
}

/* SenderInbox.consume over shared memory: acquiring header loads, run, finishChunk. */
active proctype Receiver() {
	byte gen, c, expect = 1, h, i;

	do
	:: expect > NREC -> break
	:: else ->
		atomic { hdr[(gen % NCH) * NSLOTS + c] != 0 -> h = hdr[(gen % NCH) * NSLOTS + c] };
		if
		:: h == SEALH ->
			assert(c == CAP);
			atomic {   /* the sequence words match; zero them, records and seal, then push */
				assert(sfirst[gen % NCH] == expect - c && scount[gen % NCH] == c);
				sfirst[gen % NCH] = 0; scount[gen % NCH] = 0;
				i = 0;
				do
				:: i <= c -> hdr[(gen % NCH) * NSLOTS + i] = 0; pay[(gen % NCH) * NSLOTS + i] = 0; i++
				:: else -> break
				od;
				consumed++; gen++; c = 0; i = 0
			}
		:: else ->
			assert(h == expect);   /* in order, once, never a stale header */
			atomic {
				assert(pay[(gen % NCH) * NSLOTS + c] == expect);   /* its bytes are there */
				ran++; expect++; c++
			}
		fi;
		h = 0
	od
}

/* Every terminal state: all calls made, every record run, no claim held. */
active proctype Watchdog() {
	timeout -> assert(sdone && ran == NREC && !(T & BUSY))
}
