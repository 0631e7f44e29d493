/*
 * fabricrpc Messenger, mapped-window publication (shared memory: Link.directWindow).
 *
 * One sender thread, the aggregation flusher thread (TraditionalAggregator.pushOutOverdue ->
 * Messenger.publishAppendedFromAnotherThread) and the receiving thread (SenderInbox). The
 * sender makes NREC calls, each a send (written into the window, header stored with release:
 * writeKnownInWindow / publishInWindow) or an append (traditional aggregation): into the window,
 * the batch's first header held back in `held` and later headers stored with release, or, for
 * batches of small records, into staging, copied into the chunk under publicationLock. Either
 * thread publishes an appended batch: the sender through publish() (a window batch without the
 * lock), the flusher under publicationLock. A full chunk is sealed under the lock; the sender
 * moves to the next chunk of a ring of NCH once the receiver has finished (zeroed) it.
 *
 * A slot holds one record: hdr (the 4-byte header, one atomic store over shared memory: 0, the
 * record's sequence number, or SEALH) and pay (its payload: the sequence number again). Every
 * step is sequentially consistent; a release store is modelled by its place in program order
 * (after the stores it publishes), an acquiring load likewise (before the loads it guards).
 *
 *   NCH  chunks in the ring     CAP  record slots per chunk (+1 for the seal)   NREC  calls
 *   STAGED  appended batches may go to staging (copied under the lock) as well as the window
 * Negative checks (must FAIL):
 *   WINDOW_NOLOCK  the flusher publishes a window batch without publicationLock
 *   PLAIN_HEADER   a later header of an appended window batch is stored without release
 *                  (it may become visible before the record's payload)
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

/* Messenger.appended: sealed << 32 | IN_WINDOW? | position */
#define APP(g, win, p) ((g) * 32 + (win) * 16 + (p))
#define AGEN(a) ((a) / 32)
#define AWIN(a) (((a) / 16) % 2)
#define AEND(a) ((a) % 16)
/* Messenger.held: offset << 32 | header, or -1 */
#define HELD(at, h) ((at) * 16 + (h))
#define HAT(x) ((x) / 16)
#define HHDR(x) ((x) % 16)

/* ---- receiver's chunks (stored into directly by sender and flusher over the window) ---- */
byte hdr[MEM];
byte pay[MEM];
/* ---- sender's staging (small appended records), read by the flusher's copy ---- */
byte shdr[NSLOTS];
byte spay[NSLOTS];
/* ---- shared messenger state ---- */
byte published;                 /* PUBLISHED: release stores by the sender, CAS by the flusher */
byte appended;                  /* APPENDED: release store after each append */
byte held = NONE;               /* HELD */
byte sgen;                      /* sealed == the current chunk's generation (window = ring[sgen % NCH]) */
byte lk;                        /* publicationLock: 0 free, 1 sender, 2 flusher */
byte consumed;                  /* consumed-chunk count pushed by the receiver */
/* ---- ghost ---- */
byte ran;
bit sdone;

/* a store into chunk generation g at slot s: only into a chunk the receiver has freed (for this
 * generation) and not finished */
#define WSTORE(arr, g, s, v) atomic { assert(consumed <= (g) && (g) < consumed + NCH); arr[((g) % NCH) * NSLOTS + (s)] = (v) }

/* Link.writePublished over shared memory, [from, to) of staging into the current chunk: the
 * rest, then the first header (release). Used for staged batches and for the seal. */
inline copyFromStaging(cfrom, cto, g) {
	atomic {
		i = cfrom;
		do
		:: i < cto ->
			if :: i < CAP -> WSTORE(pay, g, i, spay[i]) :: else fi;   /* the seal is a header only */
			if :: i > cfrom -> WSTORE(hdr, g, i, shdr[i]) :: else fi;
			i++
		:: else -> break
		od;
		i = 0
	};
	WSTORE(hdr, g, cfrom, shdr[cfrom])
}

/* Messenger.publishStaged(false) by the sender (publish(), or advanceLocked's publishStaged(true),
 * which is the same without a mapped-window deferral). */
inline senderPublishStaged() {
	if
	:: published == pos
	:: published != pos && biw ->
		/* a window batch: store the held header, if the other thread has not cleared it */
		w = held;
		if
		:: w != NONE -> WSTORE(hdr, sgen, HAT(w), HHDR(w)); held = NONE
		:: else
		fi;
		published = pos;
		w = 0
	:: published != pos && !biw ->
		assert(lk == 1);   /* a copy from staging holds the lock */
		copyFromStaging(published, pos, sgen);
		published = pos
	fi
}

/* Messenger.publish() */
inline publish() {
	if
	:: biw && published != pos -> senderPublishStaged()   /* no lock */
	:: else ->
		atomic { lk == 0 -> lk = 1 };
		senderPublishStaged();
		lk = 0
	fi
}

active proctype Sender() {
	byte seq = 1, pos, w, i;
	bit biw = 1;   /* batchInWindow */

	do
	:: seq > NREC -> break
	:: else ->
		if
		:: pos == CAP ->
			/* advance(): publish what waits, seal, wait for the next chunk, move. The code
			 * retries advance() with the lock released in between; the flusher, finding the
			 * chunk sealed, does nothing then, so the lock is held across the wait here. */
			atomic { lk == 0 -> lk = 1 };
			senderPublishStaged();
			atomic { shdr[pos] = SEALH };
			copyFromStaging(pos, pos + 1, sgen);
			atomic { sgen + 1 - consumed <= NCH - 1 -> sgen++; pos = 0; published = 0; lk = 0 }
		:: else
		fi;
		if
		:: /* send: tryWrite publishes appended records first, then publishInWindow */
			skip;
			if
			:: published != pos -> publish()
			:: else
			fi;
			WSTORE(pay, sgen, pos, seq);
			WSTORE(hdr, sgen, pos, seq);          /* release */
			atomic { pos++; published = pos }     /* soPublished (release) */
		:: /* append (appendKnown) */
			skip;
			if
			:: published == pos ->              /* countAppendAndChooseWindow: a batch starts */
				if :: biw = 1 :: STAGED -> biw = 0 fi
			:: else
			fi;
			if
			:: biw ->
#ifdef PLAIN_HEADER
				if
				:: published != pos -> WSTORE(hdr, sgen, pos, seq)   /* BAD: visible before the payload */
				:: else
				fi;
				WSTORE(pay, sgen, pos, seq);
				if
				:: pos == published -> held = HELD(pos, seq)
				:: else
				fi
#else
				WSTORE(pay, sgen, pos, seq);
				/* appendedInWindow: the batch's first header is held, a later one stored (release) */
				if
				:: pos == published -> held = HELD(pos, seq)
				:: pos != published -> WSTORE(hdr, sgen, pos, seq)
				fi
#endif
			:: else ->
				atomic { spay[pos] = seq; shdr[pos] = seq }   /* stage */
			fi;
			pos++;
			appended = APP(sgen, biw, pos)   /* release, after the record */
		fi;
		seq++;
		if
		:: publish()   /* the aggregator's batch is full, or a flush */
		:: skip
		fi
	od;
	/* flush, or go quiet and leave the batch to the flusher */
	if
	:: publish()
	:: skip
	fi;
	sdone = 1
}

/* Messenger.publishAppendedFromAnotherThread, called when a batch waits (unpublishedBatch). */
active proctype Flusher() {
	byte ae, from, aend, first, i;
end:
	do
	:: atomic {
#ifdef WINDOW_NOLOCK
		AEND(appended) > published && AGEN(appended) == sgen ->
#else
		lk == 0 && AEND(appended) > published && AGEN(appended) == sgen -> lk = 2
#endif
	   };
		ae = appended;        /* acquire */
		from = published;     /* acquire */
		aend = AEND(ae);
		if
		:: AGEN(ae) != sgen || aend <= from   /* a chunk left, or nothing waits */
		:: else ->
			if
			:: AWIN(ae) ->
				first = held;
				if
				:: first != NONE && HAT(first) < aend ->
					WSTORE(hdr, sgen, HAT(first), HHDR(first));   /* publishHeld */
					atomic { if :: held == first -> held = NONE :: else fi }
				:: else
				fi;
				atomic { if :: published == from -> published = aend :: else fi }
			:: else ->
				assert(lk == 2);
				copyFromStaging(from, aend, sgen);
				published = aend
			fi
		fi;
#ifndef WINDOW_NOLOCK
		lk = 0;
#endif
		ae = 0; from = 0; aend = 0; first = 0
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
			atomic {   /* zero records and seal, then push the consumed count */
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

active proctype Watchdog() {
	timeout -> assert(sdone && ran == NREC)
}
