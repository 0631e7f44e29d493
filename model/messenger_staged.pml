/*
 * fabricrpc Messenger, staged publication (transports without a mapped window: RDMA).
 *
 * One sender thread, the node's flusher thread (MessagingNode.publishIfStale), a wire that
 * places the link's WRITEs, and the receiving thread (SenderInbox). The sender serializes each
 * call's record into staging and writes it into the current chunk of a ring of NCH chunks in
 * the receiver: deferred (writeFirstByteAs: the record with its flag cleared, the flag waiting
 * in `dfr`, published by the next WRITE's FOLLOWS or by a 1-byte flag write) or, when COALESCE
 * and the link is backlogged, held (UNSENT: not written at all, sent by the next call's WRITE
 * or by the flusher, whoever claims it by CAS). A full chunk is sealed under publicationLock,
 * and the sender moves on once the receiver has consumed (zeroed) the next chunk and the seal's
 * WRITE has completed (staging is refilled from offset 0).
 *
 * Memory is byte-granular where it matters: a slot (one record, or the seal) has three
 * "bytes": ctl (the control byte: VALID, FOLLOWS, SEAL tag), lng (the three length bytes,
 * placed or not; their value is the record's length) and pay (the payload: the record's
 * sequence number, so the receiver can check FIFO, exactly-once and "all bytes landed").
 * The wire places the WRITEs in post order (one RC queue pair), and the bytes of one WRITE in
 * any order, one per step, reading staging as it places them (as an RDMA NIC and
 * ScramblingTransport do).
 *
 *   NCH       chunks in the ring (1, 2)          CAP   record slots per chunk (+1 for the seal)
 *   NREC      calls the sender makes             COALESCE  calls may be held (UNSENT)
 *   MIDFLUSH  the sender may flush (publish(): its waiting flag) between calls
 *   APPENDS   calls may also be appended (traditional aggregation: staged, unpublished) and the
 *             aggregation flusher publishes them (publishAppendedFromAnotherThread, whose copy
 *             from staging goes through publishRange on that thread, under publicationLock)
 *   NO_HSF_LOCK  drops the lock/unlock publishRange takes when FOLLOWS follows held records
 * Negative checks (must FAIL):
 *   ONE_WRITE        writePublished as one WRITE: the flag byte lands in any order with the rest
 *   FLUSHER_NOLOCK   the node flusher claims and posts a waiting range without publicationLock
 *   FOLLOWS_CLAIMED  the sender marks FOLLOWS after the flusher claimed held records (not yet
 *                    posted); fails only with NO_HSF_LOCK
 *   SEAL_NO_FOLLOWS  the seal clears a waiting flag without marking FOLLOWS (the flag is lost)
 *   NO_AWAIT         the sender refills staging without awaitCompletion(lastTicket)
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
#ifndef COALESCE
#define COALESCE 1
#endif
#ifndef MIDFLUSH
#define MIDFLUSH 0
#endif
#ifndef APPENDS
#define APPENDS 0
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

/* the waiting range (Messenger.deferred): start, end, UNSENT; NONE = -1 */
#define NONE 255
#define RANGE(s, e, u) ((s) * 16 + (e) * 2 + (u))
#define RSTART(r) ((r) / 16)
#define REND(r) (((r) / 2) % 8)
#define UNSENT(r) ((r) % 2)
/* Messenger.appended: sealed << 32 | position (no IN_WINDOW without a window) */
#define APP(g, p) ((g) * 16 + (p))
#define AGEN(a) ((a) / 16)
#define AEND(a) ((a) % 16)

/* WRITEs: (kind, chunk generation, from, to, first byte) */
#define W_DATA 1                /* staging [from, to) */
#define W_BYTE 2                /* the 1-byte write of staging's control byte at from */
#define FB_SKIP 255             /* W_DATA without its first byte (writePublished's first WRITE) */
#define FB_SRC 254              /* W_DATA with its first byte from staging */
/* any other first byte: W_DATA whose first byte is this value (writeFirstByteAs) */

/* ---- receiver's chunks (written by the wire; read and zeroed by the receiver) ---- */
byte ctl[MEM];
byte lng[MEM];
byte pay[MEM];
/* ---- sender's staging: one chunk's worth, offsets as in the chunk ---- */
byte sctl[NSLOTS];
byte slen[NSLOTS];
byte spay[NSLOTS];
/* ---- shared messenger state ---- */
byte dfr = NONE;                /* Messenger.deferred (volatile / CAS) */
byte lk;                        /* publicationLock: 0 free, 1 sender, 2 node flusher, 3 aggregation flusher */
byte sgen;                      /* generation of the sender's current chunk (ring index sgen % NCH) */
byte consumed;                  /* consumed-chunk count pushed by the receiver */
byte issued;                    /* tickets: WRITEs posted on the link */
byte landed;                    /* WRITEs wholly placed (isComplete(t) iff landed >= t) */
bit dirty;                      /* a byte landed since the receiver's last look */
byte published;                 /* Messenger.published: the sender's; the aggregation flusher's too (APPENDS) */
byte appended;                  /* Messenger.appended (APPENDS) */
byte last;                      /* Messenger.lastTicket (set by whoever posts through publishRange) */
bit hsf;                        /* Messenger.heldSinceFollows */
chan wq = [QN] of { byte, byte, byte, byte, byte };
/* ---- ghost ---- */
byte ran;                       /* records run by the receiver */
bit sdone;                      /* the sender has made all its calls (and flushed or gone quiet) */

/* Messenger.publishRange(from, to, defer). Steps: read `deferred`; claim a held range (CAS)
 * or mark FOLLOWS on this WRITE's first record (a staged byte not posted yet: invisible, so
 * fused with the read); the lock/unlock after held records; post; store `deferred`. */
inline publishRange(pfrom, pto, defer, me) {
	from = pfrom;
	w = dfr;
	if
	:: w != NONE && UNSENT(w) ->
		atomic {
			if
			:: dfr == w -> dfr = NONE; from = RSTART(w)   /* held calls go first, in this WRITE */
			:: else                                        /* the flusher claimed them */
#ifdef FOLLOWS_CLAIMED
				-> sctl[from] = sctl[from] | FOLLOWS     /* BAD: they may not be posted yet */
#endif
			fi
		}
#ifdef SEAL_NO_FOLLOWS
	:: w != NONE && !UNSENT(w) && (sctl[from] & SEALT) -> dfr = NONE   /* BAD: the seal drops the flag */
	:: w != NONE && !UNSENT(w) && !(sctl[from] & SEALT) -> sctl[from] = sctl[from] | FOLLOWS
#else
	:: w != NONE && !UNSENT(w) -> sctl[from] = sctl[from] | FOLLOWS   /* markFollows(from) */
#endif
	:: else
	fi;
	if
	:: hsf && (sctl[from] & FOLLOWS) ->
#ifndef NO_HSF_LOCK
		if
		:: lk == me                                    /* reentrant: held already */
		:: else -> atomic { lk == 0 -> lk = me }; lk = 0  /* the flusher posted what it claimed */
		fi;
#endif
		hsf = 0
	:: else
	fi;
	atomic {
		assert(len(wq) + 2 <= QN);   /* the queue bound hides no interleaving */
		if
		:: defer -> wq!W_DATA, sgen, from, pto, sctl[from] - (sctl[from] & VALID); issued++
#ifdef ONE_WRITE
		:: !defer -> wq!W_DATA, sgen, from, pto, FB_SRC; issued++
#else
		:: !defer -> wq!W_DATA, sgen, from, pto, FB_SKIP; wq!W_BYTE, sgen, from, from + 1, FB_SRC; issued = issued + 2
#endif
		fi;
		last = issued
	};
	if
	:: defer -> dfr = RANGE(from, pto, 0)             /* setVolatile, after the post */
	:: else -> dfr = NONE
	fi;
	w = 0
}

/* Messenger.holdStaged: the calls [published, pos) join the waiting range, unsent. */
inline holdStaged() {
	hsf = 1;
	from = published;
	w = dfr;
	ok = 0;
	if
	:: w != NONE && UNSENT(w) ->
		atomic {   /* extend the held range by CAS only */
			if
			:: dfr == w -> dfr = RANGE(RSTART(w), pos, 1); ok = 1
			:: else
			fi
		}
	:: else
	fi;
	if
	:: !ok ->
		if
		:: w != NONE && !UNSENT(w) -> sctl[from] = sctl[from] | FOLLOWS   /* stands for the flag-only range */
		:: else
		fi;
		dfr = RANGE(from, pos, 1)   /* setVolatile: replaces a flag-only range */
	:: else
	fi;
	w = 0; ok = 0
}

/* Messenger.publish() by the sender (a flush, or tryWrite finding appended records):
 * publishStaged(false) under publicationLock: the appended records, or else the waiting range
 * (publishDeferred -> postDeferredFlag: claim, then post). */
inline senderPublish() {
	atomic { lk == 0 -> lk = 1 };
	if
	:: published != pos -> publishRange(published, pos, 0, 1); published = pos
	:: else ->
		atomic {
			assert(len(wq) + 2 <= QN);   /* the queue bound hides no interleaving */
			w = dfr;
			if
			:: w != NONE ->
				dfr = NONE;
				if
				:: UNSENT(w) -> wq!W_DATA, sgen, RSTART(w), REND(w), FB_SKIP;
					wq!W_BYTE, sgen, RSTART(w), RSTART(w) + 1, FB_SRC; issued = issued + 2
				:: else -> wq!W_BYTE, sgen, RSTART(w), RSTART(w) + 1, FB_SRC; issued++
				fi
			:: else
			fi;
			w = 0
		}
	fi;
	lk = 0
}

/* advance(): seal the full chunk under publicationLock (publishStaged(true) first: appended
 * records go out with their flag waiting, and the seal's FOLLOWS publishes them), then wait
 * until the next chunk is free and the seal's WRITE completed, and move on. The code retries
 * advance() (lock, check, unlock); holding the lock across the wait is equivalent here:
 * `deferred` is -1 after a seal and nothing is appended, so no other thread has work. */
inline advance() {
	atomic { lk == 0 -> lk = 1 };
	if
	:: published != pos -> publishRange(published, pos, 1, 1); published = pos
	:: else
	fi;
	atomic { sctl[pos] = VALID | SEALT; slen[pos] = LSEAL };
	publishRange(pos, pos + 1, 0, 1);
	sealed++;
	atomic {
#ifdef NO_AWAIT
		sealed - consumed <= NCH - 1 ->   /* BAD: staging refilled while WRITEs may still read it */
#else
		sealed - consumed <= NCH - 1 && landed >= last ->
#endif
		sgen++; pos = 0; published = 0; lk = 0
	}
}

active proctype Sender() {
	byte seq = 1, pos, w, from, sealed;
	bit ok;

	do
	:: seq > NREC -> break
	:: else ->
		if
		:: true ->   /* send: tryWrite(publishNow) */
			if
			:: published != pos -> senderPublish()   /* appended records go first */
			:: else
			fi;
			if
			:: pos == CAP -> advance()   /* no room */
			:: else
			fi;
			/* stage(): serialize the record and its header (VALID set) into staging */
			atomic { sctl[pos] = VALID; slen[pos] = LREC; spay[pos] = seq; pos++; seq++ };
			if
			:: COALESCE -> holdStaged()                 /* link.isBacklogged: any answer */
			:: publishRange(published, pos, 1, 1)       /* publishStaged(defers) */
			fi;
			published = pos
		:: APPENDS ->   /* append: tryWrite(publishNow = false) */
			if
			:: pos == CAP -> advance()
			:: else
			fi;
			atomic { sctl[pos] = VALID; slen[pos] = LREC; spay[pos] = seq; pos++; seq++ };
			appended = APP(sgen, pos)   /* release, after the record */
		fi;
		if
		:: MIDFLUSH || APPENDS -> senderPublish()
		:: skip
		fi
	od;
	/* flush(), or go quiet and leave the waiting records to the flushers */
	if
	:: senderPublish()
	:: skip
	fi;
	sdone = 1
}

/* MessagingNode's flusher: publishIfStale -> postDeferredFlag. "Stale" (the same range at two
 * looks) is any time here. tryLock, then claim by CAS; a failed tryLock or CAS changes nothing. */
active proctype Flusher() {
	byte p, g;
end:
	do
#ifdef FLUSHER_NOLOCK
	:: atomic { dfr != NONE -> p = dfr; dfr = NONE; g = sgen };
#else
	:: atomic { lk == 0 && dfr != NONE -> lk = 2; p = dfr; dfr = NONE; g = sgen };
#endif
		atomic {
			assert(len(wq) + 2 <= QN);   /* the queue bound hides no interleaving */
			if
			:: UNSENT(p) ->   /* held calls: their bytes, then the first flag in a later WRITE */
				wq!W_DATA, g, RSTART(p), REND(p), FB_SKIP;
				wq!W_BYTE, g, RSTART(p), RSTART(p) + 1, FB_SRC; issued = issued + 2
			:: else ->        /* the waiting flag alone, from staging */
				wq!W_BYTE, g, RSTART(p), RSTART(p) + 1, FB_SRC; issued++
			fi;
#ifndef FLUSHER_NOLOCK
			lk = 0;
#endif
			p = 0; g = 0
		}
	od
}

#if APPENDS
/* AggregationFlusher -> Messenger.publishAppendedFromAnotherThread: the staged batch the sender
 * left waiting, copied from staging through publishRange on this thread, under the lock. */
active proctype AggFlusher() {
	byte ae, pfrom, w, from;
end:
	do
	:: atomic { lk == 0 && AEND(appended) > published && AGEN(appended) == sgen -> lk = 3 };
		ae = appended;        /* acquire */
		pfrom = published;    /* acquire */
		if
		:: AGEN(ae) != sgen || AEND(ae) <= pfrom
		:: else -> publishRange(pfrom, AEND(ae), 0, 3); published = AEND(ae)
		fi;
		lk = 0; ae = 0; pfrom = 0
	od
}
#endif

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

active proctype Wire() {
	byte k, g, from, to, fb, s;
	unsigned mask : 12;
end:
	do
	:: atomic {
		wq?k, g, from, to, fb ->
		if
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

/* SenderInbox.consume with provenByALaterWrite (ChunkLayout rule 2) and finishChunk. */
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
			/* finishChunk: zero records and seal, then push the consumed count */
			atomic {
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

/* Every terminal state: all calls made and every record run (no lost record, no deadlock). */
active proctype Watchdog() {
	timeout -> assert(sdone && ran == NREC && dfr == NONE)
}
