package io.fabricrpc.fabric;

/**
 * A join attempt the coordinator refused, as recorded by {@link ControlPlane#refusals()} and reported to
 * {@link ControlPlaneListener#joinRefused(JoinRefusal)}.
 *
 * @param remoteAddress address the attempt came from, e.g. {@code /127.0.0.1:53012}
 * @param claimedRank   rank the joiner claimed, or -1 if it never said
 * @param reason        classification
 * @param message       the message sent to the joiner
 */
public record JoinRefusal(String remoteAddress, int claimedRank, JoinRefusedException.Reason reason, String message) {
}
