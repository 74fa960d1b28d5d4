package io.falkon.cli;

import io.falkon.client.FalkonClient;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;

/** How {@code wait}, {@code results} and {@code cancel} name a detached instance and reach its dispatcher. */
final class InstanceRef {

    @Parameters(index = "0", paramLabel = "INSTANCE", description = "the instance: its id, or the first digits of "
            + "it, as falkon submit --detach printed it on this machine; or its key (ID-SECRET) from anywhere")
    String ref;

    @Option(names = "--dispatcher", paramLabel = "HOST:PORT", description = "the dispatcher (default: the one the "
            + "instance was submitted to, from this machine's record)")
    String dispatcher;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    private InstanceRecords.Record record;

    /** The instance named: its key, and what this machine recorded about it (if anything). */
    InstanceRecords.Record record() throws IOException {
        if (record == null) {
            record = InstanceRecords.standard().find(ref);
        }
        return record;
    }

    String address() throws IOException {
        String a = dispatcher != null ? dispatcher : record().dispatcher();
        if (a == null) {
            throw new Falkon.UserError("which dispatcher? nothing here records where " + ref + " runs: add "
                    + "--dispatcher HOST:PORT");
        }
        if (a.startsWith("http://") || a.startsWith("https://")) {
            throw new Falkon.UserError("instances are taken over on the dispatcher's TCP port, not its WS "
                    + "interface: give --dispatcher HOST:PORT");
        }
        return a;
    }

    FalkonClient connect() throws IOException {
        return DispatcherAddress.connect(address(), connect);
    }
}
