package io.fabricrpc.transport.shm;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;

import java.nio.file.Path;
import java.util.HexFormat;

/** A child process that owns an shm endpoint and one region, then idles until it is killed or stopped. */
public final class ShmEndpointProcess {
    public static void main(String[] args) throws Exception {
        Transport transport = new ShmTransport(Path.of(args[0]), 65536, 20, 10_000);
        LocalRegion region = transport.allocate(4096, RemoteAccess.WRITE);
        System.out.println("ADDRESS " + HexFormat.of().formatHex(transport.address().bytes()));
        System.out.println("REGION " + region.remote().regionId());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
