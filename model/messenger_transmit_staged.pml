/*
 * fabricrpc Messenger, staged publication (RDMA), around a single transmit position claimed by CAS.
 *
 * Threads: the owner (the messenger's sender thread), the background agent (the node thread that
 * transmits what the owner left pending), the wire that places the link's WRITEs, and the
 * receiving thread (SenderInbox, as in messenger_staged.pml).
 *
 * Shared words:
 *   T  the transmit word (gen, off, BUSY, FLAG): records below off are posted; BUSY: a claim is in
 *      progress; FLAG: the VALID bit of the record at F has not been sent. Changed only by a claim
 *      (CAS setting BUSY from a value read without it; the claimant alone posts, then stores the new
 *      value, BUSY cleared) or by the owner's plain store when it moves to the next chunk (nothing
 *      pending then).
 *   A  the append word (gen, off): records below off are framed in staging. Owner only, release.
 *   F  the record whose VALID waits; written by the owner before the store of T that sets FLAG.
 * Owner: append (frame at A.off, VALID set, A := off + 1) and transmit(defer) (claim; FOLLOWS at
 * staging[t] when FLAG and t < a; one WRITE with the first VALID cleared (defer) or writePublished
 * (two WRITEs: all but the first byte, then the first byte alone); a waiting flag alone when t == a).
 * A send is append + transmit(defer), or append only (COALESCE: the link is backlogged, or
 * traditional aggregation). Seal: post the chunk's sequence words (first record, count: an inline
 * WRITE), append the seal, transmit(false), wait for the next chunk to be free and the owner's last
 * ticket to complete, then T := (gen+1, 0), A := (gen+1, 0). The receiver checks the sequence words
 * against its own count when it reads the seal (a gap poisons the channel in SenderInbox).
 * Agent, at any moment: acquire A, then T; unless T is BUSY or of another generation, and if work
 * is pending (t < a or FLAG), claim by CAS from the value read, post (the waiting flag first, then
 * writePublished [t, a)), release T := (gen, max(t, a)) (the A read may be stale: see STALE_A_OFF).
 *
 *   NCH  chunks in the ring (1, 2)    CAP  record slots per chunk (+1 for the seal)   NREC  calls
 *   DEFER     sends defer their flag (publication delay on); 0: every transmit is writePublished
 *   COALESCE  a call may only append (the agent or a later transmit sends it)
 *   MIDFLUSH  the owner may flush (transmit(false)) after any call
 *   AGENT_FOLLOWS  the agent marks FOLLOWS at staging[t] instead of posting the waiting flag first
 * Two fixes to the protocol as first specified are modelled by default (model/README.md, findings);
 * these defines restore the first specification, and each FAILS (checks *-NEG):
 *   STALE_A_OFF        a flag-only agent claim releases T := (gen, a) with the a of its A read, which
 *                      may be stale (t > a): T goes back, a range is sent again (fix: keep off = t)
 *   OWNER_TICKET_ONLY  lastTicket is set by the owner's posts only; the agent may have posted the
 *                      seal, and the owner refills staging under it (fix: every claimant sets
 *                      lastTicket after its post, before it releases T)
 *   NO_GHOST           drops the ghost checks on T's stores and on posting (to see what the
 *                      receiver sees of a bad ordering)
 * Negative checks (must FAIL):
 *   PLAIN_STORE    the owner's transmit advances T with a plain store, without claiming it
 *   RELEASE_EARLY  a claimant stores the released T before it posts its WRITEs
 *   AGENT_NO_CAS   the agent posts without claiming (reads T, posts, stores T)
 *   NO_AWAIT       the owner refills staging without awaiting its last ticket
 *   ONE_WRITE      writePublished as one WRITE: the first byte lands in any order with the rest
 *   SEQ_AFTER_SEAL the owner posts the sequence words after the seal's WRITE: the receiver may read
 *                  the seal before them (and would poison a sound channel)
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
#ifndef DEFER
#define DEFER 1
#endif
#ifndef COALESCE
#define COALESCE 1
#endif
#ifndef MIDFLUSH
#define MIDFLUSH 0
#endif
#define NSLOTS (CAP + 1)        /* record slots, then the seal's */
#define MEM (NCH * NSLOTS)
#ifndef QN
#define QN 8                    /* posted, unplaced WRITEs: asserted never to fill */
#endif

/* control byte */
#define VALID 4
#define FOLLOWS 2
#define SEALT 1
/* length "bytes": 0 = not placed; otherwise placed, with this length */
#define LREC 1                  /* a record (length > 0) */
#define LSEAL 2                 /* the seal: growth 0, i.e. a length field of 0 */

/* T: gen << 5 | off << 2 | BUSY | FLAG */
#define BUSY 2
#define FLAG 1
#define TV(g, o, f) ((g) * 32 + (o) * 4 + (f))
#define TGEN(x) ((x) / 32)
#define TOFF(x) (((x) / 4) % 8)
#define TPOS(x) ((x) / 4)       /* (gen, off), ordered */
/* A: gen << 3 | off */
#define AV(g, o) ((g) * 8 + (o))
#define AGEN(x) ((x) / 8)
#define AOFF(x) ((x) % 8)

/* WRITEs: (kind, chunk generation, from, to, first byte) */
#define W_DATA 1                /* staging [from, to) */
#define W_BYTE 2                /* the 1-byte write of staging's control byte at from */
#define W_SEQ 3                 /* the chunk's sequence words: (W_SEQ, gen, first record, count, 0) */
#define FB_SKIP 255             /* W_DATA without its first byte (writePublished's first WRITE) */
#define FB_SRC 254              /* W_DATA with its first byte from staging */
/* any other first byte: W_DATA whose first byte is this value (writeFirstByteAs) */

/* ---- receiver's chunks (written by the wire; read and zeroed by the receiver) ---- */
byte ctl[MEM];
byte lng[MEM];
byte pay[MEM];
byte sfirst[NCH];               /* the sequence words of each chunk: its first record's number */
byte scount[NCH];               /* ... and its record count (0 and 0 while unwritten) */
/* ---- owner's staging: one chunk's worth, offsets as in the chunk ---- */
byte sctl[NSLOTS];
byte slen[NSLOTS];
byte spay[NSLOTS];
/* ---- shared messenger state ---- */
byte T;                         /* the transmit word */
byte A;                         /* the append word */
byte F;                         /* the record whose VALID waits (FLAG) */
byte consumed;                  /* consumed-chunk count pushed by the receiver */
byte issued;                    /* tickets: WRITEs posted on the link */
byte landed;                    /* WRITEs wholly placed (isComplete(t) iff landed >= t) */
bit dirty;                      /* a byte landed since the receiver's last look */
byte last;                      /* lastTicket: set by every claimant after its post (read by the owner) */
chan wq = [QN] of { byte, byte, byte, byte, byte };
/* ---- ghost ---- */
byte gsent;                     /* staging [0, gsent) of the current chunk has been posted */
byte ran;                       /* records run by the receiver */
bit sdone;                      /* the owner has made all its calls (and flushed or gone quiet) */

/* A store of T: (gen, off) never goes backwards (ghost check on every store). */
inline setT(v) {
	atomic {
#ifndef NO_GHOST
		assert(TPOS(v) >= TPOS(T));
#endif
		T = v
	}
}

/* Posting (one step with the decision that leads to it: nothing observes a posted WRITE before the
 * wire places it). Ghost: data is posted once, contiguously, in order (no double send, no gap);
 * a flag write is for a record already posted. */
inline postData(pf, pt) {
#ifndef NO_GHOST
	assert(pf == gsent && pt > pf);
#endif
	gsent = pt
}
inline postPublished(pf, pt, pg) {   /* Link.writePublished */
	postData(pf, pt);
#ifdef ONE_WRITE
	wq!W_DATA, pg, pf, pt, FB_SRC; issued++
#else
	wq!W_DATA, pg, pf, pt, FB_SKIP; wq!W_BYTE, pg, pf, pf + 1, FB_SRC; issued = issued + 2
#endif
}
inline postDeferred(pf, pt, pg) {    /* Link.writeFirstByteAs: the first control byte without VALID */
	postData(pf, pt);
	wq!W_DATA, pg, pf, pt, sctl[pf] - (sctl[pf] & VALID); issued++
}
inline postFlag(pf, pg) {            /* the 1-byte flag write, from staging */
#ifndef NO_GHOST
	assert(pf < gsent);
#endif
	wq!W_BYTE, pg, pf, pf + 1, FB_SRC; issued++
}

/* Owner: transmit(defer). The claim: wait until T is not BUSY, then CAS from the value read (a
 * failed CAS changes nothing: one step). Nothing pending: no claim. */
inline transmit(defer) {
	atomic {
		!(T & BUSY) -> tv = T;
		if
		:: TOFF(tv) == pos && !(tv & FLAG) -> claimed = 0
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
		assert(TGEN(tv) == gen && t <= pos);
		if
		:: t < pos && defer -> nt = TV(gen, pos, FLAG)
		:: t < pos && !defer -> nt = TV(gen, pos, 0)
		:: t == pos && !defer -> nt = TV(gen, pos, 0)
		:: t == pos && defer -> nt = tv   /* (not reached: a send appends first) */
		fi;
#ifdef RELEASE_EARLY
		if :: t < pos && defer -> F = t :: else fi;
		setT(nt);   /* BAD: released before the post */
#endif
		atomic {
			assert(len(wq) + 2 <= QN);   /* the queue bound hides no interleaving */
			if
			:: t < pos ->
				if
				:: tv & FLAG -> sctl[t] = sctl[t] | FOLLOWS   /* publishes the record at F */
				:: else
				fi;
				if
				:: defer -> postDeferred(t, pos, gen); F = t
				:: else -> postPublished(t, pos, gen)
				fi
			:: t == pos && (tv & FLAG) && !defer -> postFlag(F, gen)
			:: else
			fi;
			last = issued
		};
#ifndef RELEASE_EARLY
		setT(nt);   /* release */
#endif
		claimed = 0; t = 0; nt = 0
	:: else
	fi;
	tv = 0
}

/* The chunk is full: append the seal, transmit it, wait for the next chunk and for the writes that
 * read staging, move. */
inline seal() {
#ifndef SEQ_AFTER_SEAL
	atomic { assert(len(wq) + 1 <= QN); wq!W_SEQ, gen, seq - CAP, CAP, 0; issued++ };
#endif
	atomic { sctl[pos] = VALID | SEALT; slen[pos] = LSEAL; pos++ };
	A = AV(gen, pos);   /* release */
	transmit(0);
#ifdef SEQ_AFTER_SEAL
	atomic { assert(len(wq) + 1 <= QN); wq!W_SEQ, gen, seq - CAP, CAP, 0; issued++; last = issued };
#endif
	atomic {
#ifdef NO_AWAIT
		gen + 1 - consumed <= NCH - 1 ->   /* BAD: staging refilled while WRITEs may still read it */
#else
		gen + 1 - consumed <= NCH - 1 && landed >= last ->
#endif
		assert(T == TV(gen, pos, 0));      /* nothing pending: the plain store overwrites no claim */
		gen++; pos = 0; gsent = 0
	};
	setT(TV(gen, 0, 0));   /* plain store, release */
	A = AV(gen, 0)         /* release */
}

active proctype Owner() {
	byte seq = 1, pos, gen, tv, nt, t;
	bit claimed;

	do
	:: seq > NREC -> break
	:: else ->
		if
		:: pos == CAP -> seal()
		:: else
		fi;
		/* append: frame the record (VALID set) in staging, then publish its end */
		atomic { sctl[pos] = VALID; slen[pos] = LREC; spay[pos] = seq; pos++; seq++ };
		A = AV(gen, pos);   /* release */
		if
		:: transmit(DEFER)          /* send */
		:: COALESCE -> skip         /* backlogged, or aggregation: append only */
		fi;
		if
		:: MIDFLUSH -> transmit(0)
		:: skip
		fi
	od;
	/* flush, or go quiet and leave what is pending to the agent */
	if
	:: transmit(0)
	:: skip
	fi;
	sdone = 1
}

/* The agent. "At any moment": it looks again whenever A or T changed since its last look (a look
 * at the same values decides the same; this keeps the model free of idle cycles for -DNP). */
active proctype Agent() {
	byte av, tv, nt, t, a, f, g, seenA = 255, seenT = 255;
	bit ok;
end:
	do
	:: atomic { (A != seenA || T != seenT) -> av = A };   /* acquire A */
		atomic {   /* acquire T, and the CAS from the value read */
			tv = T; seenA = av; seenT = tv;
			t = TOFF(tv); a = AOFF(av); g = AGEN(av);
			if
			:: !(tv & BUSY) && TGEN(tv) == g && (t < a || (tv & FLAG)) ->
#ifndef AGENT_NO_CAS
				T = tv | BUSY;
#endif
				ok = 1
			:: else -> ok = 0
			fi
		};
		if
		:: ok ->
			if
			:: t < a -> nt = TV(g, a, 0)
#ifdef STALE_A_OFF
			:: else -> nt = TV(g, a, 0)   /* BAD: a may be stale (t > a): T goes back */
#else
			:: else -> nt = TV(g, t, 0)   /* only the flag: off stays (a may be stale) */
#endif
			fi;
#ifdef RELEASE_EARLY
			setT(nt);   /* BAD: released before the post */
#endif
			f = F;      /* written before the store of T that set FLAG */
			atomic {
				assert(len(wq) + 3 <= QN);
				if
				:: (tv & FLAG) && t < a ->
#ifdef AGENT_FOLLOWS
					sctl[t] = sctl[t] | FOLLOWS;
#else
					postFlag(f, g);
#endif
					postPublished(t, a, g)
				:: (tv & FLAG) && t >= a -> postFlag(f, g)
				:: !(tv & FLAG) -> postPublished(t, a, g)
				fi;
#ifdef OWNER_TICKET_ONLY
				skip   /* BAD: the owner's await does not cover this post */
#else
				last = issued   /* lastTicket, before the release of T */
#endif
			};
#ifndef RELEASE_EARLY
			setT(nt);   /* release */
#endif
		:: else
		fi;
		av = 0; tv = 0; nt = 0; t = 0; a = 0; f = 0; g = 0; ok = 0
	od
}

/* Lands byte b (slot b / 3, field b % 3) of the WRITE being placed, reading staging now. */
#define LAND(b) \
	:: (mask >> (b)) & 1 -> atomic { \
		s = (b) / 3; \
		assert(consumed <= g && g < consumed + NCH);   /* only in a chunk the receiver has freed and not finished */ \
		if \
		:: (b) % 3 == 0 -> ctl[(g % NCH) * NSLOTS + s] = (s == from && fb < FB_SRC -> fb : sctl[s]) \
		:: (b) % 3 == 1 -> lng[(g % NCH) * NSLOTS + s] = slen[s] \
		:: (b) % 3 == 2 -> pay[(g % NCH) * NSLOTS + s] = spay[s] \
		fi; \
		mask = mask & ~(1 << (b)); dirty = 1; s = 0 }

/* One RC queue pair: WRITEs placed in post order, the bytes of one in any order. */
active proctype Wire() {
	byte k, g, from, to, fb, s;
	unsigned mask : 12;
end:
	do
	:: atomic {
		wq?k, g, from, to, fb ->
		if
		:: k == W_SEQ ->   /* an inline WRITE: read only after the seal, placed before any later WRITE */
			assert(consumed <= g && g < consumed + NCH);
			sfirst[g % NCH] = from; scount[g % NCH] = to; dirty = 1; mask = 0
		:: k == W_BYTE -> mask = 1 << (3 * from)
		:: else ->
			s = from;
			do
			:: s < to && s < CAP -> mask = mask | (7 << (3 * s)); s++
			:: s < to && s == CAP -> mask = mask | (3 << (3 * s)); s++   /* the seal: a header only */
			:: else -> break
			od;
			if
			:: fb == FB_SKIP -> mask = mask & ~(1 << (3 * from))
			:: else
			fi
		fi;
		s = 0
	   };
		do
		:: mask == 0 -> break
		LAND(0) LAND(1) LAND(2) LAND(3) LAND(4) LAND(5)
		LAND(6) LAND(7) LAND(8) LAND(9) LAND(10) LAND(11)
		od;
		atomic { landed++; k = 0; g = 0; from = 0; to = 0; fb = 0 }
	od
}

/* SenderInbox.consume with provenByALaterWrite (ChunkLayout rule 2) and finishChunk
 * (as in messenger_staged.pml). */
active proctype Receiver() {
	byte gen, c, proven, expect = 1, h, hl, o, f, fl, i;
	bit ok;

	do
	:: expect > NREC -> break
	:: else ->
		atomic { dirty = 0; h = ctl[(gen % NCH) * NSLOTS + c]; hl = lng[(gen % NCH) * NSLOTS + c] };
		ok = ((h & VALID) != 0 || c < proven);
		if
		:: !ok ->
			/* the walk: from the read position through wholly placed headers with VALID to
			 * a record marked FOLLOWS. Each header is a separate acquiring load. */
			o = c;
			do
			:: hl == 0 || hl == LSEAL || o + 1 > CAP -> break   /* not placed; length 0 (a seal) */
			:: else ->
				atomic { f = ctl[(gen % NCH) * NSLOTS + o + 1]; fl = lng[(gen % NCH) * NSLOTS + o + 1] };
				if
				:: (f & FOLLOWS) -> proven = o + 1; ok = 1; break
				:: !(f & FOLLOWS) && ((f & VALID) == 0 || (f & SEALT)) -> break
				:: else -> o++; hl = fl
				fi
			od;
			o = 0; f = 0; fl = 0;
			if
			:: ok -> atomic { h = ctl[(gen % NCH) * NSLOTS + c]; hl = lng[(gen % NCH) * NSLOTS + c] }
			:: else
			fi
		:: else
		fi;
		if
		:: !ok -> dirty    /* nothing to run yet: wait for a byte to land */
		:: ok && (h & SEALT) ->
			assert(hl == LSEAL && c == CAP);   /* a wholly placed seal, after the last record */
			/* finishChunk: the sequence words match the records run; zero them, the records and
			 * the seal, then push the consumed count */
			atomic {
				assert(sfirst[gen % NCH] == expect - c && scount[gen % NCH] == c);
				sfirst[gen % NCH] = 0; scount[gen % NCH] = 0;
				i = 0;
				do
				:: i <= c -> ctl[(gen % NCH) * NSLOTS + i] = 0; lng[(gen % NCH) * NSLOTS + i] = 0;
					pay[(gen % NCH) * NSLOTS + i] = 0; i++
				:: else -> break
				od;
				consumed++; gen++; c = 0; proven = 0; i = 0
			}
		:: ok && !(h & SEALT) ->
			assert(hl == LREC);   /* a published or proven header is wholly placed */
			atomic {
				assert(pay[(gen % NCH) * NSLOTS + c] == expect);   /* landed, in order, once */
				ran++; expect++; c++
			}
		fi;
		h = 0; hl = 0; ok = 0
	od
}

/* Every terminal state: all calls made, every record run, no flag waiting, no claim held. */
active proctype Watchdog() {
	timeout -> assert(sdone && ran == NREC && !(T & FLAG) && !(T & BUSY))
}
