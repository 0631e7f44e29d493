/**
 * The RDMA checks of {@code fabricrpc doctor}: devices, ports and GIDs from sysfs, the bundled {@code libdisni.so}
 * (checksum and version stamp) and an optional bounded rdma_cm probe of a peer. Registered as an
 * {@link io.fabricrpc.doctor.DoctorCheckProvider} so the invocation module needs no dependency on this one.
 */
package io.fabricrpc.transport.rdma.doctor;
