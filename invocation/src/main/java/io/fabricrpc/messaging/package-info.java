/**
 * One-sided messaging: a sender thread's records travel to one destination thread through chunks of the receiver's
 * memory that the sender fills and the receiver drains (Seriema §4.4.1). Wire format: {@link
 * io.fabricrpc.messaging.ChunkLayout}.
 *
 * <h2>The sending path, by owner</h2>
 * <pre>
 *   sender thread                               agent thread (SendingAgent, one per fabric)
 *   -------------                               -------------------------------------------
 *   Messenger  (FullPolicy over result codes)
 *     ChunkRing       chunks, seal, growth, consumed counts
 *     RecordAppender  frames records: APPENDED | DOES_NOT_FIT          reads appended (acquire)
 *     Publisher       transmit position  &lt;-------- CAS claim ---------  transmitIfStale / transmitIfPending
 *       WindowPublisher  (shm: held header, staging copy)
 *       StagedPublisher  (RDMA: writePublished, deferred flag, FOLLOWS)
 *   decorators: AsyncQueueChannel (RETRY_ASYNC), aggregation's TraditionalAggregator / OverflowAggregator
 * </pre>
 * Every field of the messenger, ring and appender is written by the sender thread only. The one word two threads
 * write is the publisher's <em>transmit position</em> {@code T = gen << 34 | FLAG? | BUSY? | offset}: monotonic, and
 * changed only by a CAS that sets BUSY (a <em>claim</em>) or by the sender's release store when nothing is pending.
 *
 * <h2>Framing and transmission</h2>
 * <ol>
 *   <li>The sender frames a record at {@code position} (into the mapped chunk, or into staging at the same offset)
 *   and then stores {@code appended = gen << 34 | IN_STAGING? | position} with release. Records in
 *   {@code [offset(T), offset(appended))} are framed but not transmitted.</li>
 *   <li>Whoever transmits claims first: a CAS from the value it read, without BUSY, to the same value with BUSY. The
 *   claimant alone transmits {@code [offset(T), offset(appended as it read it))}, then stores the new position with
 *   release, BUSY cleared. Claims are therefore serial: a range is transmitted once, and WRITEs are posted in claim
 *   order, which is record order.</li>
 *   <li>The sender claims on every send over RDMA, on a flush, a seal and close; the agent claims only what has not
 *   moved for a tick (a flag, held calls, an aggregated batch whose sender went quiet), and a flush from another
 *   thread claims too. A claimant that is not the sender never defers and never sets FOLLOWS: it sends a waiting flag
 *   as a 1-byte WRITE of its own, before its range.</li>
 *   <li>Over a mapped chunk, a send with nothing pending stores its header with release and then moves {@code T} with
 *   a release store; {@code appended} stays behind until the next frame-only record stores it. A claimant reads
 *   {@code appended} before {@code T} and claims only while {@code appended} is ahead, so it never sees a gap
 *   across such a store, and no claim can be in progress (nothing was pending).</li>
 *   <li>Over a mapped chunk, a frame-only record that starts a batch ({@code offset(T) == position}) has its header
 *   held in the appender (release) instead of the chunk; later records of the batch store theirs. Transmitting the
 *   batch stores the held header, which publishes it all. A batch of small records sits in staging instead, and
 *   transmitting it copies it and stores its first header last, with release.</li>
 *   <li>Over RDMA a send may defer its flag: the WRITE goes with VALID cleared in its first control byte, and the claim
 *   ends with FLAG set ({@code flagAt}: that record). The sender's next claim sets FOLLOWS on its first record, which
 *   publishes the flagged records (ChunkLayout, rule 2), or sends the flag byte alone. Coalescing: while the link is
 *   backlogged a send only frames; the next claim carries the held records in its WRITE.</li>
 *   <li>A chunk is left by a seal, framed where the next record would go and transmitted with whatever is pending,
 *   by the sender's claim. The sender moves to the next chunk once the receiver has consumed it and every write has
 *   completed (the latest ticket of any claimant: staging is refilled from 0), and then stores {@code T} and
 *   {@code appended} for the new generation, in that order. A claimant's CAS from an older generation fails.</li>
 *   <li>Close claims and never releases: nothing is transmitted after it.</li>
 * </ol>
 * The protocol is model-checked with Spin ({@code model/messenger_transmit_*.pml}, {@code scripts/model-check.sh}):
 * no record lost or run twice, FIFO, none run before all its bytes landed (WRITEs placed byte by byte), no deadlock,
 * and negative checks for a plain store over a pending range, a claim released before its post, an agent posting
 * without a claim, and a refill of staging before the writes completed.
 *
 * <h2>Waiting calls: a drain claim</h2>
 * {@link io.fabricrpc.messaging.AsyncQueueChannel} (RETRY_ASYNC) and the overflow aggregator keep calls that found
 * every chunk full in a queue of their own, drained into the messenger, oldest first, by the sender at its next call
 * or flush, or by the agent when the sender is quiet. Moving them frames records and may seal chunks, so it happens
 * only under a {@link io.fabricrpc.messaging.DrainClaim}: a position advanced by CAS (even to odd) and by its
 * holder's release store, which the sender also holds whenever it touches the messenger while calls wait. The
 * messenger then has one writer at a time, handed over by acquire/release on that one word; the drain that empties
 * the queue clears the waiting flag as its last touch of the messenger ({@code model/waiting_calls_drain.pml}: FIFO,
 * exactly once, one writer at a time, and negative checks for a flag cleared early, a send past waiting calls and an
 * agent draining without the claim).
 *
 * <h2>Dropped channels (poisoning)</h2>
 * A receiver drops a sender's channel when what arrives can no longer be trusted or the channel can no longer
 * advance: a corrupt record header, a chunk whose sequence words (first record, count; {@link
 * io.fabricrpc.messaging.ChunkLayout}) disagree with the records it counted, a record its handler rejects (an unknown
 * invocation kind or function id, an undecodable record: {@link io.fabricrpc.messaging.RecordRejectedException}), or
 * a consumed count it could not push. It runs nothing more from that sender, reports the failure once, and writes the
 * channel's poison word in the sender's notification slot: a {@link io.fabricrpc.messaging.PoisonReason} code and the
 * number of records run before that point, written once by the destination thread as one inline write whose code
 * byte lands last, after a short text. The sender loads the code byte (acquire, local memory: no remote operation)
 * at its first send and then every {@code Messenger.LOOK_PERIOD} (64) sends, at each frame that starts a
 * batch (nothing pending), at each framed write, and in its RETRY and synchronizer waits. The first look to find it
 * set says so by CAS (a flag set once), and from then on every send on the channel throws
 * {@link io.fabricrpc.messaging.ChannelPoisonedException} naming the receiver, the reason and the calls accepted
 * but not run (accepted minus run), and synchronizers waiting on the channel fail. Calls accepted between the
 * poisoning and the sender's next look are among those counted as not run: none of them is reported as sent.
 * The sequence is per chunk rather than per record: 4 bytes per record would grow an 8-byte call's record from 16
 * to 20 bytes, whereas the chunk's words cost one 16-byte inline write (or its stores) per chunk. The price: the
 * words are checked when the chunk is finished, so the records of a misnumbered chunk may have run by then; the
 * poison word then says how many did.
 *
 * <h2>Failed and fenced peers</h2>
 * A send looks at its link before it posts a record. A send in place, into a mapped chunk, reads only the
 * look-always flag, which the link's failure hook sets ({@link io.fabricrpc.transport.Link#whenFailed}: fencing, the
 * peer's death, a file cut short, the endpoint's close or fault): its next send looks and throws. The flag is read
 * plainly; a send that does not see the CAS yet is one racing the verdict, and the look every {@code LOOK_PERIOD}
 * sends bounds how long. A frame looks when it starts a batch, and every
 * transmission of framed records looks again (the owner's throws {@link io.fabricrpc.api.PeerFailedException}, another
 * thread's and close's transmit nothing): records framed into the batch open at a verdict never leave, even into a
 * mapped chunk, and the call, flush or wait that would send them throws.
 */
package io.fabricrpc.messaging;

import io.fabricrpc.api.FullPolicy;
