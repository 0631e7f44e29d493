package io.fabricrpc.transport.rdma.firehose;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** JFR: a firehose cache miss registered buckets with the device; its duration is the registration calls' time. */
@Name("fabricrpc.RegistrationMiss")
@Label("Registration cache miss")
@Category({"fabricrpc", "Transport"})
@Description("A Firehose registration cache miss: buckets registered with the RDMA device (never a hit)")
final class RegistrationMissEvent extends Event {
    @Label("Bytes registered")
    @DataAmount
    long bytes;
    @Label("Buckets")
    int buckets;
    @Label("Failed")
    boolean failed;
}
