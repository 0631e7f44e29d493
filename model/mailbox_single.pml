/*
 * fabricrpc mailbox protocol: ONE port, one client thread, one server thread.
 *
 * Client C and server S each have their OWN memory region; no word is read by both.
 * Remote writes go through a FIFO link per direction and are landed later, one at a
 * time and in issue order, by a "wire" process (RDMA RC; shared memory is the zero-delay
 * case). With one thread per side the per-port locks are trivially held and are omitted.
 * The client calls forever (SYNC, ASYNC, and with STREAM 2-exchange calls, chosen
 * nondeterministically); every completed call passes a progress label.
 *
 *   REORDER  lets packet and flag writes of one send land in either order: must FAIL.
 *   UNFUSED  issues a send's packet and flag writes in two steps instead of one.
 */
#ifndef STREAM
#define STREAM 1
#endif

/* Packet = (call tag, fragment index, bit); bit is "last fragment" in a request, unused
 * in a reply. Tag 0 means "no call". */
#define MKPKT(tag, frag, bit) ((tag) * 4 + (frag) * 2 + (bit))
#define TAG(v)  ((v) / 4)
#define FRAG(v) (((v) / 2) % 2)
#define BIT(v)  ((v) % 2)
#define NTAGS 3   /* tags cycle 1..NTAGS: enough to tell this call from the earlier ones */

mtype = { PKT, FLAG };

/* ---- client region (written only by the S->C wire) ---- */
bit  inC;        /* client owns the port iff inC == outC */
byte pktC;       /* reply copy; S's write lands only while C does not own and does not read it */
/* ---- client process-local ---- */
bit  outC;       /* value C last wrote into inS */

/* ---- server region (written only by the C->S wire) ---- */
bit  inS;        /* server owns the port iff inS != outS */
byte pktS;       /* request copy; C's write lands only while S does not own and does not read it */
/* ---- server process-local ---- */
bit  outS;       /* value S last wrote into inC */

/* ---- the links: pending remote writes (kind, value), landed in issue order ---- */
chan c2s = [2] of { mtype, byte };
chan s2c = [2] of { mtype, byte };

/* ---- ghost state, only read by assertions ---- */
bit  readingC;   /* C has read pktC and not yet given the port back (read window) */
bit  readingS;   /* S has read pktS and not yet given the port back (read window) */
byte asyncTag;   /* tag of the ASYNC call whose reply is still owed (0: none) */

/* send = remote-write the packet, flip the out-box, remote-write the flag, in that order
 * on one FIFO link. Issued in one step (nothing observes an issued write before the wire
 * lands it); REORDER lets the flag be issued, and so land, first. */
#ifdef REORDER
#define SEND(link, outbox, v) \
	if \
	:: link!PKT, v; outbox = 1 - outbox; link!FLAG, outbox \
	:: outbox = 1 - outbox; link!FLAG, outbox; link!PKT, v \
	fi
#elif defined(UNFUSED)
#define SEND(link, outbox, v) \
	link!PKT, v; } atomic { outbox = 1 - outbox; link!FLAG, outbox
#else
#define SEND(link, outbox, v) \
	link!PKT, v; outbox = 1 - outbox; link!FLAG, outbox
#endif

/* C->S link: lands C's remote writes in S's region. */
active proctype WireC2S() {
	mtype k; byte v;
end:
	do
	:: atomic {
		c2s?k, v ->
		if
		:: k == PKT ->
			assert(inS == outS && !readingS);   /* request lands only while S neither owns nor reads */
			pktS = v
		:: else -> inS = v
		fi;
		k = 0; v = 0
	   }
	od
}

/* S->C link: lands S's remote writes in C's region. */
active proctype WireS2C() {
	mtype k; byte v;
end:
	do
	:: atomic {
		s2c?k, v ->
		if
		:: k == PKT ->
			assert(inC != outC && !readingC);   /* reply lands only while C neither owns nor reads */
			pktC = v
		:: else -> inC = v
		fi;
		k = 0; v = 0
	   }
	od
}

active proctype Client() {
	byte tag, v, frag;
	bit more, async, stale;   /* more: a streamed fragment follows this exchange */

	do
	:: /* open: choose the call's shape; an earlier ASYNC call may still be owed its reply */
		atomic {
			tag = tag % NTAGS + 1;
			if :: more = 0 :: STREAM -> more = 1 fi;
			if :: async = 0 :: async = 1 fi;
			stale = (inC != outC);
			if
			:: !stale -> asyncTag = 0   /* an ASYNC reply already landed: overwritten unread */
			:: else
			fi
		}
		if
		:: stale -> atomic { inC == outC -> readingC = 1; v = pktC }   /* wait for it, then discard */
		:: else
		fi;
exchange:
		atomic {
			readingC = 0;
			if
			:: stale -> assert(asyncTag != 0 && TAG(v) == asyncTag); asyncTag = 0; stale = 0
			:: else
			fi;
			v = 0;
			assert(inC == outC);   /* C writes pktS only while owning the port */
			SEND(c2s, outC, MKPKT(tag, frag, 1 - more));
			if
			:: !more && async -> asyncTag = tag   /* close without waiting */
			:: else
			fi
		}
		if
		:: !more && async
		:: else ->
			/* recv: wait for ownership back; the reply (or stream ack) must be this call's */
			atomic {
				inC == outC ->
				readingC = 1; v = pktC;
				assert(TAG(v) == tag && FRAG(v) == frag);
				if
				:: more -> more = 0; frag = 1; goto exchange
				:: else
				fi
			}
		fi;
progress_close:
		atomic { readingC = 0; v = 0; frag = 0; async = 0 }
	od
}

/* wait for ownership of a request (or of the next fragment), then read it */
inline recvS() {
	atomic {
		inS != outS ->
		readingS = 1; v = pktS;
		/* a call's fragments arrive in order, all carrying the call's tag */
		assert(TAG(v) != 0 && FRAG(v) == frag && (frag == 0 || TAG(v) == tag));
		tag = TAG(v)
	}
}

active proctype Server() {
	byte v, tag, frag;

end_idle:
	recvS();
	do
	:: BIT(v) == 0 ->
		/* streamed: ack the fragment (ownership back to C), wait for the next one */
		atomic { readingS = 0; SEND(s2c, outS, MKPKT(tag, frag, 0)); v = 0; frag++ };
		recvS()
	:: else -> break
	od;
	/* reply and close (a close without a reply sends an empty one: always a send) */
	atomic {
		readingS = 0;
		assert(inS != outS);   /* S writes pktC only while owning the port */
		SEND(s2c, outS, MKPKT(tag, frag, 0));
		v = 0; tag = 0; frag = 0
	}
	goto end_idle
}
